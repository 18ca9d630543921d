/** `dds-migrate export --from E`: the snapshot's path on stdout (`f=$(dds-migrate export ...)`). */
import { countOf } from '../display-name.js';
import { assertNever, ExitCode, UsageError } from '../errors.js';
import {
  type ExportEvent,
  type ExportOptions,
  type ExportSummary,
  exportSnapshot,
} from '../export/export-snapshot.js';
import type { SnapshotPart } from '../snapshot/format.js';
import type { CommandSpec, ParsedArgs } from './command.js';
import type { CliContext } from './context.js';
import { resolveSide, runEnvironments, runPorts, withEnvironmentOptions } from './environment.js';
import { parseListOption, readPathOption, readStringOption, stringOption } from './options.js';
import { readEncryption, withEncryptionOptions } from './snapshot-keys.js';

function readExportOptions(args: ParsedArgs, cwd: string): ExportOptions {
  const ids = parseListOption(args.ids, '--ids');
  const types = parseListOption(args.type, '--type');
  const nameGlob = readStringOption(args, 'name', "a glob such as 'finance-*'");
  const file = readPathOption(args, 'o', cwd, 'a path');
  const outDir = readPathOption(args, 'out-dir', cwd, 'a path');
  const include = readInclude(args.include);
  if ((file === undefined) === (outDir === undefined)) {
    throw new UsageError('Expected exactly one of -o FILE or --out-dir DIR', { hint: 'See --help' });
  }
  return {
    ids,
    types,
    nameGlob,
    include,
    output: file === undefined ? { outDir: outDir as string } : { file },
  };
}

function readInclude(value: unknown): readonly SnapshotPart[] {
  const listed = parseListOption(value, '--include') ?? ['connections', 'profiles'];
  const parts: SnapshotPart[] = [];
  for (const item of listed) {
    if (item === 'connections') parts.push('connections');
    else if (item === 'profiles' || item === 'scanProfiles') parts.push('scanProfiles');
    else {
      throw new UsageError(`Unknown --include ${JSON.stringify(item)}`, {
        hint: 'Use --include connections,profiles (or one of them)',
      });
    }
  }
  return parts;
}

export const exportCommand: CommandSpec = {
  builder: (yargs) =>
    withEnvironmentOptions(withEncryptionOptions(yargs), ['from'])
      .options({
        ids: stringOption('Only these connection ids (comma-separated)'),
        type: stringOption('Only these types (comma-separated), e.g. s3,snowflake'),
        name: stringOption("Only names matching this glob, e.g. 'finance-*'"),
        include: stringOption('What to export: connections,profiles (default both)'),
        o: stringOption('Write the snapshot to FILE (replaced atomically if it exists)', { alias: 'output' }),
        'out-dir': stringOption('Write DIR/<environment>/<UTC timestamp>.snapshot.jsonl (never overwrites)'),
      })
      .conflicts('o', 'out-dir'),
  examples: [
    { command: '$0 export --from prod -o prod.snapshot.jsonl', describe: 'Every connection of prod' },
    {
      command: '$0 export --from prod --type s3,snowflake --out-dir backups',
      describe: 'Only s3 and snowflake, timestamped, in backups/',
    },
    {
      command: "$0 export --from prod --name 'finance-*' -o finance.snapshot.jsonl",
      describe: 'Only names matching a glob',
    },
    {
      command:
        '$0 export --from prod --encrypt-to age1vnkasu8eatf5ec2cewx4vk363ccvj06f7puv9j08pcq3ayp8hs9snyn33t -o prod.snapshot.age',
      describe: 'Encrypted with age to a recipient (its key opens it: docs/encrypted-snapshots.md)',
    },
  ],
  async run(args, ctx) {
    const request = readExportOptions(args, ctx.io.cwd);
    const encryption = await readEncryption(args, ctx);
    const { source, summary } = await exportSnapshot(
      { ...request, ...(encryption ? { encryption } : {}) },
      {
        resolveSource: () => resolveSide(ctx, args, 'from'),
        retryBudget: runEnvironments(ctx).retryBudget,
        ...runPorts(ctx),
      },
      (event) => renderExportEvent(event, ctx),
    );
    printSummary(summary, source, ctx);
    if (encryption && !ctx.globals.json) {
      const to =
        'passphrase' in encryption ? 'a passphrase' : countOf(encryption.recipients.length, 'recipient');
      ctx.out.info(`The snapshot is encrypted with age to ${to}`);
    }
    return ExitCode.ok;
  },
};

function renderExportEvent(event: ExportEvent, ctx: CliContext): void {
  switch (event.kind) {
    case 'unlisted-id':
      ctx.out.warn(
        `connection ${event.name} has no _id in the list: it cannot be exported by id and is left out`,
      );
      return;
    case 'ids-missing':
      ctx.out.warn(
        `${event.ids.length} selected ${event.ids.length === 1 ? 'id was' : 'ids were'} not in the export (unknown or deleted meanwhile): ${event.ids.slice(0, 10).join(', ')}${event.ids.length > 10 ? ', ...' : ''}`,
      );
      return;
    case 'profiles-unavailable':
      ctx.out.warn(
        `scan profiles are not in the snapshot: GET /scanProfiles answered ${event.status} (${event.message}); the header says so, and an import of it leaves the target's profiles alone`,
      );
      return;
    case 'profile-left-out':
      ctx.out.warn(`scan profile ${event.profile} is left out of the snapshot: ${event.reason}`);
      return;
    case 'profile-unknown-sources':
      ctx.out.warn(
        `scan profile ${event.profile} names data sources no connection of the source answers to (${event.refs.join(', ')}): an import will need connections of those names in the target`,
      );
      return;
    case 'empty':
      ctx.out.warn(
        event.cause === 'selection'
          ? 'the selection matched no connection: the snapshot is empty'
          : `${event.source} has no connections: the snapshot is empty`,
      );
      return;
    default:
      assertNever(event, 'export event');
  }
}

function printSummary(summary: ExportSummary, label: string, ctx: CliContext): void {
  if (ctx.globals.json) {
    ctx.out.json(summary);
    return;
  }
  ctx.out.result(summary.path);
  const byType = Object.entries(summary.types)
    .map(([type, count]) => `${type}: ${count}`)
    .join(', ');
  ctx.out.info(
    `Wrote ${countOf(summary.entryCount, 'connection')} of ${label} to ${summary.path}${byType ? ` (${byType})` : ''}`,
  );
  if (summary.include.includes('scanProfiles'))
    ctx.out.info(`Wrote ${countOf(summary.scanProfileCount, 'scan profile')}`);
  const masked = summary.maskedSecrets;
  if (masked.entries > 0) {
    const fields = Object.entries(masked.fields)
      .sort((a, b) => b[1] - a[1])
      .map(([field, count]) => `${field}: ${count}`)
      .join(', ');
    ctx.out.info(
      `${masked.entries} ${masked.entries === 1 ? 'connection carries' : 'connections carry'} masked secrets that an import will need supplied (${fields}); see --overrides`,
    );
  }
}
