/** `dds-migrate connections list`: options in, {@link listEnvironmentConnections}, the records out. */
import type { FilterClause, ListOptions } from '../api/types.js';
import { ExitCode, UsageError } from '../errors.js';
import { listEnvironmentConnections } from '../listing/list-environment-connections.js';
import type { CommandSpec, ParsedArgs } from './command.js';
import { envPorts, withEnvironmentOptions } from './environment.js';
import { parseListOption, parseSortOption, readStringOption, SORT_OPTION, stringOption } from './options.js';
import { chooseStdoutFormat, createRecordWriter, LIST_FORMAT_OPTION } from './render.js';

const CONNECTION_COLUMNS: readonly string[] = [
  'name',
  'type',
  '_id',
  'enabled',
  'scanner_group',
  'security_tier',
];

/** `--filter`, checked to be a JSON array of objects so that a typo stops before anything is sent. */
function parseFilterOption(value: unknown): Record<string, unknown>[] {
  if (value === undefined) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof value === 'string' ? value : '');
  } catch {
    parsed = undefined;
  }
  if (!Array.isArray(parsed) || parsed.some((c) => typeof c !== 'object' || c === null || Array.isArray(c))) {
    throw new UsageError(
      `Expected --filter to be a JSON array such as [{"field":"type","value":["s3"],"operator":"in"}], got ${JSON.stringify(String(value)).slice(0, 120)}`,
      { hint: 'Quote the JSON for your shell' },
    );
  }
  return parsed as Record<string, unknown>[];
}

function buildConnectionListOptions(args: ParsedArgs, signal: AbortSignal): ListOptions {
  const types = parseListOption(args.type, '--type');
  const clauses = parseFilterOption(readStringOption(args, 'filter'));
  if (types) clauses.push({ field: 'type', value: types, operator: 'in' } satisfies FilterClause);
  const sortBy = readStringOption(args, 'sort');
  const sort = sortBy === undefined ? undefined : parseSortOption(sortBy);
  return {
    ...(clauses.length > 0 ? { filter: JSON.stringify(clauses) } : {}),
    ...(sort === undefined ? {} : { sort }),
    signal,
  };
}

export const connectionsListCommand: CommandSpec = {
  builder: (yargs) =>
    withEnvironmentOptions(yargs, ['env']).options({
      type: stringOption('Only these types (comma-separated), e.g. s3,snowflake'),
      filter: stringOption(
        'The service filter as a JSON array, e.g. \'[{"field":"enabled","value":"yes","operator":"equal"}]\'',
      ),
      sort: SORT_OPTION,
      format: LIST_FORMAT_OPTION,
    }),
  examples: [
    { command: '$0 connections list --env prod', describe: 'Table of every connection of prod' },
    {
      command: '$0 connections list --env dr --type s3,snowflake --format ndjson',
      describe: 'Only s3 and snowflake ones of dr, one JSON object per line',
    },
    { command: '$0 connections list --env prod --format csv > connections.csv', describe: 'A spreadsheet' },
  ],
  async run(args, ctx) {
    const format = chooseStdoutFormat(args.format, ctx.out, ctx.globals.json);
    const listOptions = buildConnectionListOptions(args, ctx.signal);
    const writer = createRecordWriter(format, ctx.out, CONNECTION_COLUMNS);
    const { environment } = await listEnvironmentConnections(listOptions, envPorts(ctx, args), (connection) =>
      writer.write(connection),
    );
    await writer.end();
    ctx.log.info({ environment, count: writer.count }, 'listed connections');
    return ExitCode.ok;
  },
};
