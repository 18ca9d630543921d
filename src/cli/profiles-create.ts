/** `dds-migrate profiles create --env E --file PROFILE.json`: one POST; prints the new `_id`. */
import { ExitCode } from '../errors.js';
import { createProfileFromFile } from '../profiles/create.js';
import type { CommandSpec } from './command.js';
import { envPorts, withEnvironmentOptions } from './environment.js';
import { booleanOption, readPathOption, readStringOption, stringOption } from './options.js';
import { withRefusalJson } from './render.js';

export const profilesCreateCommand: CommandSpec = {
  builder: (yargs) =>
    withEnvironmentOptions(yargs, ['env']).options({
      file: stringOption('The profile (schemas/scan-profile.schema.json)', { demandOption: true }),
      'allow-run': booleanOption(
        'Allow a one-time profile (isSingleRunScan: true): it starts a scan at once',
      ),
      confirm: stringOption('Name of a protected environment, to allow writing to it'),
    }),
  examples: [
    {
      command: '$0 profiles create --env prod --file nightly-pii-copy.json',
      describe: 'Create the renamed copy (a scheduled profile); prints its _id',
    },
  ],
  async run(args, ctx) {
    const { created, oneTime } = await withRefusalJson(
      ctx,
      createProfileFromFile(
        {
          file: readPathOption(args, 'file', ctx.io.cwd) ?? '',
          allowRun: args.allowRun === true,
          confirm: readStringOption(args, 'confirm'),
        },
        envPorts(ctx, args),
      ),
    );
    if (ctx.globals.json) ctx.out.json(created);
    else ctx.out.result(String(created._id));
    ctx.out.info(
      `created scan profile '${created.name}'${oneTime ? ' (one-time: its scan has started)' : ''}`,
    );
    return ExitCode.ok;
  },
};
