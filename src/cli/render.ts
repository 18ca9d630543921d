/** Renderers of record lists (table, JSON, NDJSON, CSV: all but the table streamed) and of refusals. */
import { createRequire } from 'node:module';
import { countOf } from '../display-name.js';
import { ExitCode, PreflightError, type Problem, UsageError } from '../errors.js';
import { formatProblem } from '../importer/preflight.js';
import { scrub } from '../secrets.js';
import type { CliContext, Output } from './context.js';
import { describeGiven, formatOption } from './options.js';

/** Every output format of a record list. */
export type OutputFormat = 'table' | 'json' | 'ndjson' | 'csv';

export const OUTPUT_FORMATS: readonly OutputFormat[] = ['table', 'json', 'ndjson', 'csv'];

/** `--format` of `connections list` and `profiles list`. */
export const LIST_FORMAT_OPTION = formatOption(
  OUTPUT_FORMATS,
  'Output format (default: table on a terminal, ndjson otherwise; json with --json)',
);

/** Writes records in one format; `end` is called once, after the last record. */
interface RecordWriter {
  write(record: Record<string, unknown>): void;
  end(): Promise<void>;
  readonly count: number;
}

/** The format of a record list on stdout: by default a table on a terminal, NDJSON for a pipe or a file. */
export function chooseStdoutFormat(
  format: unknown,
  out: Pick<Output, 'stdoutIsTTY'>,
  json: boolean,
): OutputFormat {
  return chooseFormat(format, json, OUTPUT_FORMATS, out.stdoutIsTTY ? 'table' : 'ndjson');
}

/** `--format` among `formats`; when absent, json with `--json`, else `fallback`. */
export function chooseFormat<F extends string>(
  format: unknown,
  json: boolean,
  formats: readonly F[],
  fallback: F,
): F {
  // --json promises exactly one JSON document on stdout.
  if (json && format !== undefined && format !== 'json') {
    throw new UsageError(`--json cannot be combined with --format ${String(format)}`, {
      hint: 'Drop --json, or use --format json',
    });
  }
  if (format === undefined) return json ? ('json' as F) : fallback;
  if (formats.includes(format as F)) return format as F;
  throw new UsageError(`Expected --format to be one of ${formats.join(', ')}, got ${describeGiven(format)}`, {
    hint: 'See --help',
  });
}

/** A cell's text: strings as they are, nested values as JSON, null and absent as empty. */
export function renderCell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return JSON.stringify(value);
}

function pick(record: Record<string, unknown>, columns: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const column of columns) if (Object.hasOwn(record, column)) out[column] = record[column];
  return out;
}

/** One line of CSV as csv-stringify writes it; only rows that need quoting pay for csv-stringify. */
export function renderCsvRow(cells: readonly string[]): string {
  for (const cell of cells) if (CSV_NEEDS_QUOTING.test(cell)) return csvLine(cells as string[]);
  return `${cells.join(',')}\n`;
}

const CSV_NEEDS_QUOTING = /[",\r\n]/;

// Loaded at the first row that needs quoting, not by every command that renders.
const requireModule = createRequire(import.meta.url);
function csvLine(cells: string[]): string {
  const { stringify } = requireModule('csv-stringify/sync') as typeof import('csv-stringify/sync');
  return stringify([cells], { record_delimiter: '\n' });
}

function tableCell(value: unknown, width: number): string {
  const text = renderCell(value).replace(/\r?\n/g, '\\n').replace(/\t/g, ' ');
  return text.length > width ? `${text.slice(0, Math.max(1, width - 1))}…` : text;
}

/** Render buffered rows as an aligned text table (header, rule, rows). */
export function renderTable(
  rows: readonly Record<string, unknown>[],
  columns: readonly string[],
  maxCellWidth = 60,
): string {
  const cells = rows.map((row) => columns.map((c) => tableCell(row[c], maxCellWidth)));
  // A loop, not Math.max(...): spread arguments overflow the stack past about 120 000 rows.
  const widths = columns.map((c, i) => cells.reduce((w, r) => Math.max(w, (r[i] ?? '').length), c.length));
  const line = (values: readonly string[]): string =>
    values
      .map((v, i) => (i === values.length - 1 ? v : v.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(columns), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** A writer of `format` on `out`; `columns` are the fields of the table and of the CSV. */
export function createRecordWriter(
  format: OutputFormat,
  out: Pick<Output, 'write'>,
  columns: readonly string[],
): RecordWriter {
  // The CSV header waits for the first record: a first page that fails leaves stdout empty.
  const header = renderCsvRow(columns);
  const rows: Record<string, unknown>[] = [];
  let count = 0;
  const render = (r: Record<string, unknown>): string => {
    switch (format) {
      case 'ndjson':
        return `${JSON.stringify(r)}\n`;
      case 'json':
        return `${count === 0 ? '[\n' : ',\n'}${JSON.stringify(r)}`;
      case 'csv':
        return `${count === 0 ? header : ''}${renderCsvRow(columns.map((c) => renderCell(r[c])))}`;
      case 'table':
        rows.push(pick(r, columns));
        return '';
    }
  };
  const ending = (): string => {
    switch (format) {
      case 'ndjson':
        return '';
      case 'json':
        return count === 0 ? '[]\n' : '\n]\n';
      case 'csv':
        return count === 0 ? header : '';
      case 'table':
        return `${renderTable(rows, columns)}\n`;
    }
  };
  return {
    write(record) {
      const text = render(record);
      if (text !== '') out.write(text);
      count += 1;
    },
    async end() {
      const text = ending();
      if (text !== '') out.write(text);
    },
    get count() {
      return count;
    },
  };
}

/** A dry run's note that the real run into a protected environment (`target`) needs `--confirm NAME`. */
export function protectedNote(name: string, target = name): string {
  return `${target} is a protected environment: the real run needs --confirm ${name}`;
}

/** A pre-flight's problems on stderr under `heading` (given "3 problems"); nothing with `--json`. */
export function printProblems(
  ctx: CliContext,
  problems: readonly Problem[],
  heading: (count: string) => string,
): void {
  if (ctx.globals.json) return;
  ctx.io.stderr.write(`${heading(countOf(problems.length, 'problem'))}\n`);
  // A problem that only follows from another one listed (`causedBy`) is counted, not listed.
  const refused = new Set(problems.filter((p) => p.causedBy === undefined).map((p) => p.entry));
  const follows = (p: Problem) => !ctx.globals.verbose && p.causedBy !== undefined && refused.has(p.causedBy);
  const following = problems.filter(follows);
  for (const p of problems.filter((p) => !follows(p)))
    ctx.io.stderr.write(`  - ${scrub(formatProblem(p))}\n`);
  if (following.length > 0) {
    const entries = new Set(following.map((p) => p.entry)).size;
    ctx.io.stderr.write(
      `  - and ${countOf(following.length, 'problem')} of ${countOf(entries, 'entry', 'entries')} that only follow from the above (naming a connection refused above; --verbose lists them)\n`,
    );
  }
}

/** A refused pre-flight: the `--json` result on stdout, else its problems on stderr. */
export function reportRefusal(ctx: CliContext, problems: readonly Problem[]): void {
  writeRefusalJson(ctx, problems);
  printProblems(ctx, problems, (count) => `Pre-flight found ${count}:`);
}

function writeRefusalJson(ctx: CliContext, problems: readonly Problem[]): void {
  if (ctx.globals.json) ctx.out.json({ ok: false, exitCode: ExitCode.validation, problems });
}

/** `work`, with the problems of a pre-flight refusal it throws reported as {@link reportRefusal} does. */
export async function withRefusalReported<T>(ctx: CliContext, work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof PreflightError) {
      // A refusal without a list (a protected target) says it all in its one line.
      if (error.problems.length > 0) reportRefusal(ctx, error.problems);
      else writeRefusalJson(ctx, error.problems);
    }
    throw error;
  }
}

/** `work`, with a pre-flight refusal it throws also written as the `--json` result. */
export async function withRefusalJson<T>(ctx: CliContext, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof PreflightError) writeRefusalJson(ctx, error.problems);
    throw error;
  }
}
