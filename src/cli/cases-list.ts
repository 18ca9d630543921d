/**
 * `dds-migrate cases list`: every matching case, page by page, streamed as a table, JSON, NDJSON or CSV,
 * to stdout or atomically to `-o FILE`. The listing and the file are the workflow {@link listEnvironmentCases};
 * this file reads options and renders the records.
 */
import { extname, resolve } from 'node:path';
import {
  checkCaseSelection,
  combineCaseFilters,
  DEFAULT_CASE_COLUMNS,
  parseFieldsOption,
} from '../cases/filter.js';
import { listEnvironmentCases } from '../cases/list.js';
import { ExitCode } from '../errors.js';
import type { AtomicTextFile } from '../files.js';
import { scrub } from '../secrets.js';
import type { CommandSpec, ParsedArgs } from './command.js';
import type { CliContext, Output } from './context.js';
import { createEnvironmentClient, resolveSide, withEnvironmentOptions } from './environment.js';
import { parseListOption, parseSortOption, readNumberOption, SORT_OPTION } from './options.js';
import { chooseStdoutFormat, createRecordWriter, OUTPUT_FORMATS, type OutputFormat } from './render.js';

const FORMAT_OF_EXTENSION: Readonly<Record<string, OutputFormat>> = {
  '.csv': 'csv',
  '.json': 'json',
  '.ndjson': 'ndjson',
  '.jsonl': 'ndjson',
  '.txt': 'table',
};

/**
 * The format: `--format`, else the `-o` file's extension, else table on a terminal / ndjson otherwise
 * (json with --json). Without `-o`, `--json` refuses another `--format`; with `-o` the records go to the
 * file and stdout gets the --json summary, so any format fits.
 */
export function chooseCaseFormat(args: ParsedArgs, ctx: CliContext): OutputFormat {
  if (typeof args.output !== 'string') return chooseStdoutFormat(args.format, ctx.out, ctx.globals.json);
  if (typeof args.format === 'string') return args.format as OutputFormat;
  return FORMAT_OF_EXTENSION[extname(args.output).toLowerCase()] ?? (ctx.globals.json ? 'json' : 'ndjson');
}

/** An {@link Output} whose results go to an atomic file; information and warnings still go to stderr. */
function createFileOutput(file: AtomicTextFile, out: Output): Output {
  return {
    result: (text) => file.write(`${scrub(text)}\n`),
    json: (value) => file.write(`${scrub(JSON.stringify(value, null, 2))}\n`),
    write: (text) => file.write(scrub(text)),
    info: (text) => out.info(text),
    warn: (text) => out.warn(text),
    stdoutIsTTY: false,
    stderrIsTTY: out.stderrIsTTY,
    showProgress: out.showProgress,
  };
}

/** Wait while `stream` has a full buffer, so a slow reader (a pipe, a disk) bounds memory. */
function waitForDrain(stream: NodeJS.WritableStream): Promise<void> {
  const s = stream as NodeJS.WritableStream & { writableNeedDrain?: boolean };
  if (s.writableNeedDrain !== true) return Promise.resolve();
  return new Promise((resolve) => s.once('drain', () => resolve()));
}

/** `cases list`. */
export const casesListCommand: CommandSpec = {
  command: 'list',
  describe: 'List security cases, all pages, streamed (table, json, ndjson or csv)',
  builder: (yargs) =>
    withEnvironmentOptions(yargs, ['env'])
      .option('status', {
        type: 'string',
        array: true,
        requiresArg: true,
        describe: 'Only these statuses (comma-separated), e.g. open,acknowledged',
      })
      .option('policy', {
        type: 'string',
        array: true,
        requiresArg: true,
        describe: 'Only these policy names (comma-separated; \\, for a comma in a name)',
      })
      .option('severity', {
        type: 'string',
        array: true,
        requiresArg: true,
        describe: 'Only these severities (comma-separated), e.g. critical,high',
      })
      .option('filter', {
        type: 'string',
        requiresArg: true,
        describe:
          'The service filter as JSON, e.g. \'[{"field":"assignee","value":"bob","operator":"equal"}]\' (combined with the options above)',
      })
      .option('fields', {
        type: 'string',
        array: true,
        requiresArg: true,
        describe: 'Fields to ask for and print, in order (comma-separated)',
      })
      .option('sort', SORT_OPTION)
      .option('format', {
        type: 'string',
        choices: OUTPUT_FORMATS,
        describe:
          'Output format (default: from the -o extension; else table on a terminal, ndjson otherwise; json with --json)',
      })
      .option('output', {
        alias: 'o',
        type: 'string',
        requiresArg: true,
        describe: 'Write to FILE (atomically, mode 0600) instead of stdout',
      })
      .option('page-size', {
        type: 'number',
        requiresArg: true,
        describe: 'Cases asked for per page (default 1000; the service may clamp it)',
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
    const format = chooseCaseFormat(args, ctx);
    const query = {
      filter: combineCaseFilters(selection, typeof args.filter === 'string' ? args.filter : undefined),
      sort: typeof args.sort === 'string' ? parseSortOption(args.sort) : undefined,
      fields: fields.length > 0 ? fields : undefined,
      // The table and CSV columns show the id a write takes; JSON is each case as the service sent it.
      writeId: format === 'table' || format === 'csv',
      pageSize: readNumberOption(args, 'pageSize', 'page-size', { min: 1, integer: true }),
      signal: ctx.signal,
    };
    const columns = fields.length > 0 ? fields : DEFAULT_CASE_COLUMNS;
    const result = await listEnvironmentCases(
      {
        query,
        // Paths are relative to the run's working directory (the CLI may run in-process elsewhere).
        output: typeof args.output === 'string' ? resolve(ctx.io.cwd, args.output) : undefined,
      },
      {
        resolveEnvironment: async () => (await resolveSide(ctx, args, 'env')).environment,
        createClient: (environment, options) => createEnvironmentClient(ctx, environment, options),
      },
      (file) => {
        const writer = createRecordWriter(
          format,
          file === undefined ? ctx.out : createFileOutput(file, ctx.out),
          {
            columns,
          },
        );
        return {
          write: (record) => writer.write(record),
          // A slow reader (a pipe) bounds memory.
          flush: () => (file === undefined ? waitForDrain(ctx.io.stdout) : Promise.resolve()),
          end: () => writer.end(),
        };
      },
    );
    ctx.log.info({ environment: result.environment, count: result.count }, 'listed cases');
    if (result.file !== undefined) {
      // --json: one JSON document on stdout even when the records went to a file.
      if (ctx.globals.json) ctx.out.json({ path: result.file, format, count: result.count });
      ctx.out.info(`${result.count} case(s) written to ${result.file}`);
    }
    return ExitCode.ok;
  },
};
