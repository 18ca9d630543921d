/** `dds-migrate profiles get ID --env E`: one scan profile as JSON on stdout. */
import { ExitCode, UsageError } from '../errors.js';
import { getProfile } from '../profiles/read.js';
import type { CommandSpec } from './command.js';
import { envPorts, withEnvironmentOptions } from './environment.js';

export const profilesGetCommand: CommandSpec = {
  builder: (yargs) =>
    withEnvironmentOptions(yargs, ['env']).positional('id', {
      type: 'string',
      describe: 'The profile _id (as printed by profiles create)',
    }),
  examples: [
    {
      command: '$0 profiles get 66b2a0d1c3e4f5a6b7c8d901 --env prod > nightly-pii.json',
      describe: 'Save a profile as JSON',
    },
    {
      command: `$0 profiles get 66b2a0d1c3e4f5a6b7c8d901 --env prod | sed 's/"Nightly PII - Finance"/"Nightly PII - Finance (copy)"/' > nightly-pii-copy.json`,
      describe: 'Save it under a new name, for profiles create --file',
    },
  ],
  async run(args, ctx) {
    const id = typeof args.id === 'string' ? args.id.trim() : '';
    if (id === '') throw new UsageError('Expected a scan profile id, got an empty one');
    ctx.out.json(await getProfile(id, envPorts(ctx, args)));
    return ExitCode.ok;
  },
};
