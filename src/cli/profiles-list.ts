/** `dds-migrate profiles list --env E`: every scan profile, rendered as `connections list` renders. */
import { ExitCode } from '../errors.js';
import { listEnvironmentProfiles } from '../profiles/read.js';
import type { CommandSpec } from './command.js';
import { envPorts, withEnvironmentOptions } from './environment.js';
import { chooseStdoutFormat, createRecordWriter, LIST_FORMAT_OPTION } from './render.js';

const PROFILE_COLUMNS: readonly string[] = [
  'name',
  '_id',
  'scanTemplateId',
  'schedule',
  'isSingleRunScan',
  'active',
  'dataSourceList',
];

export const profilesListCommand: CommandSpec = {
  builder: (yargs) => withEnvironmentOptions(yargs, ['env']).option('format', LIST_FORMAT_OPTION),
  examples: [
    { command: '$0 profiles list --env prod', describe: 'Table of every scan profile of prod' },
    {
      command: '$0 profiles list --env dr --format csv > profiles.csv',
      describe: 'The profiles of dr, as a spreadsheet',
    },
  ],
  async run(args, ctx) {
    const format = chooseStdoutFormat(args.format, ctx.out, ctx.globals.json);
    const writer = createRecordWriter(format, ctx.out, PROFILE_COLUMNS);
    const { environment } = await listEnvironmentProfiles(envPorts(ctx, args), (profile) =>
      writer.write(profile as unknown as Record<string, unknown>),
    );
    await writer.end();
    ctx.log.info({ environment, count: writer.count }, 'listed scan profiles');
    return ExitCode.ok;
  },
};
