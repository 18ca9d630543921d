/** `dds-migrate cases list`: options in, {@link listEnvironmentCases}, the records streamed out. */
import { extname } from 'node:path';
import {
  checkCaseSelection,
  combineCaseFilters,
  DEFAULT_CASE_COLUMNS,
  parseFieldsOption,
} from '../cases/filter.js';
import { listEnvironmentCases } from '../cases/list.js';
import { ExitCode } from '../errors.js';
import { scrub } from '../secrets.js';
import type { CommandSpec, ParsedArgs } from './command.js';
import type { CliContext } from './context.js';
import { envPorts, withEnvironmentOptions } from './environment.js';
import {
  formatOption,
  listOption,
  numberOption,
  parseListOption,
  parseSortOption,
  readNumberOption,
  readPathOption,
  readStringOption,
  SORT_OPTION,
  stringOption,
} from './options.js';
import {
  chooseFormat,
  chooseStdoutFormat,
  createRecordWriter,
  OUTPUT_FORMATS,
  type OutputFormat,
} from './render.js';

const FORMAT_OF_EXTENSION: Readonly<Record<string, OutputFormat>> = {
  '.csv': 'csv',
  '.json': 'json',
  '.ndjson': 'ndjson',
  '.jsonl': 'ndjson',
  '.txt': 'table',
};

/** `--format`, else the `-o` file's extension, else as for stdout (with `-o`, any format fits `--json`). */
function chooseCaseFormat(args: ParsedArgs, ctx: CliContext): OutputFormat {
  if (typeof args.output !== 'string') return chooseStdoutFormat(args.format, ctx.out, ctx.globals.json);
  if (args.format !== undefined) return chooseFormat(args.format, false, OUTPUT_FORMATS, 'ndjson');
  return FORMAT_OF_EXTENSION[extname(args.output).toLowerCase()] ?? (ctx.globals.json ? 'json' : 'ndjson');
}

/** Wait while `stream` has a full buffer, so a slow reader bounds memory; false once it is closed. */
function waitForDrain(stream: NodeJS.WritableStream): Promise<boolean> {
  const s = stream as NodeJS.WritableStream & { writableNeedDrain?: boolean; destroyed?: boolean };
  if (s.destroyed === true) return Promise.resolve(false);
  if (s.writableNeedDrain !== true) return Promise.resolve(true);
  return new Promise((resolve) => {
    const settle = (more: boolean) => () => {
      s.off('drain', onDrain);
      s.off('close', onClose);
      resolve(more);
    };
    const onDrain = settle(true);
    // A reader that stops early (`| head`) closes the pipe: no drain will come.
    const onClose = settle(false);
    s.once('drain', onDrain);
    s.once('close', onClose);
  });
}

export const casesListCommand: CommandSpec = {
  builder: (yargs) =>
    withEnvironmentOptions(yargs, ['env']).options({
      status: listOption('Only these statuses (comma-separated), e.g. open,acknowledged'),
      policy: listOption('Only these policy names (comma-separated; \\, for a comma in a name)'),
      severity: listOption('Only these severities (comma-separated), e.g. critical,high'),
      filter: stringOption(
        'The service filter as JSON, e.g. \'[{"field":"assignee","value":"bob","operator":"equal"}]\' (combined with the options above)',
      ),
      fields: listOption('Fields to ask for and print, in order (comma-separated)'),
      sort: SORT_OPTION,
      format: formatOption(
        OUTPUT_FORMATS,
        'Output format (default: from the -o extension; else table on a terminal, ndjson otherwise; json with --json)',
      ),
      output: stringOption('Write to FILE (atomically, mode 0600) instead of stdout', { alias: 'o' }),
      'page-size': numberOption('Cases asked for per page (default 1000; the service may clamp it)'),
    }),
  examples: [
    {
      command: '$0 cases list --env prod --status open --format ndjson',
      describe: 'Every open case, one JSON object per line',
    },
    {
      command:
        "$0 cases list --env prod --policy 'PCI - Credit Card Exposure' --severity critical,high -o cases.csv",
      describe: 'A CSV file for a ticketing system',
    },
    {
      command: '$0 cases list --env prod --fields caseId,caseStatus,assignee --sort caseId:desc',
      describe: 'Chosen columns, sorted',
    },
  ],
  async run(args, ctx) {
    const fields = parseFieldsOption(args.fields);
    const selection = {
      status: parseListOption(args.status, '--status'),
      policy: parseListOption(args.policy, '--policy'),
      severity: parseListOption(args.severity, '--severity'),
    };
    for (const warning of checkCaseSelection(selection)) ctx.out.warn(warning);
    const sortBy = readStringOption(args, 'sort');
    const format = chooseCaseFormat(args, ctx);
    const query = {
      filter: combineCaseFilters(selection, readStringOption(args, 'filter')),
      sort: sortBy === undefined ? undefined : parseSortOption(sortBy),
      fields: fields.length > 0 ? fields : undefined,
      // The table and CSV columns show the id a write takes; JSON is each case as the service sent it.
      writeId: format === 'table' || format === 'csv',
      pageSize: readNumberOption(args, 'page-size', { min: 1, integer: true }),
      signal: ctx.signal,
    };
    const columns = fields.length > 0 ? fields : DEFAULT_CASE_COLUMNS;
    const result = await listEnvironmentCases(
      {
        query,
        output: readPathOption(args, 'output', ctx.io.cwd),
      },
      envPorts(ctx, args),
      (file) => {
        const writer = createRecordWriter(
          format,
          file === undefined ? ctx.out : { write: (text) => file.write(scrub(text)) },
          columns,
        );
        return {
          write: (record) => writer.write(record),
          end: () => writer.end(),
          flush: () => (file === undefined ? waitForDrain(ctx.io.stdout) : Promise.resolve(true)),
        };
      },
    );
    ctx.log.info({ environment: result.environment, count: result.count }, 'listed cases');
    if (result.file !== undefined) {
      if (ctx.globals.json) ctx.out.json({ path: result.file, format, count: result.count });
      ctx.out.info(`${result.count} case(s) written to ${result.file}`);
    }
    return ExitCode.ok;
  },
};
