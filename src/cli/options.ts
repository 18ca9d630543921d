/** Option declarations and readers shared by every command, so an option behaves the same everywhere. */
import { resolve } from 'node:path';
import type { Options } from 'yargs';
import { UsageError } from '../errors.js';
import { type ListItems, splitListValues } from '../list-values.js';

/** A bad value as "Expected --x to be ..., got VALUE" shows it (yargs reads non-numeric text as NaN). */
export function describeGiven(value: unknown): string {
  if (typeof value === 'number' && Number.isNaN(value)) return 'a value that is not a number';
  if (Array.isArray(value) && value.length > 1) return `${value.length} values (give it once)`;
  return JSON.stringify(value) ?? String(value);
}

/** A comma-separated list option; an empty item (an empty shell variable?) is refused, not dropped. */
export function parseListOption(
  value: unknown,
  name: string,
  items: ListItems = 'trim',
): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const listed = splitListValues(value, items);
  if (listed.length === 0 || listed.some((v) => v === '')) {
    const raw = (Array.isArray(value) ? value : [value]).map(String);
    throw new UsageError(
      `Expected ${name} to be a comma-separated list of values, got ${JSON.stringify(raw.join(' '))}`,
      { hint: 'Remove the empty item (a trailing comma or an empty variable)' },
    );
  }
  return [...new Set(listed)];
}

function keyOf(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** A string option given once and non-empty; the message quotes the value: not for a secret. */
export function readStringOption(
  args: Readonly<Record<string, unknown>>,
  flag: string,
  expected = 'a non-empty value',
): string | undefined {
  const value = args[keyOf(flag)];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') {
    const shown = flag.length === 1 ? `-${flag}` : `--${flag}`;
    throw new UsageError(`Expected ${shown} to be ${expected}, got ${describeGiven(value)}`, {
      hint: 'See --help',
    });
  }
  return value;
}

/** A path option ({@link readStringOption}) resolved against `cwd`; undefined when absent. */
export function readPathOption(
  args: Readonly<Record<string, unknown>>,
  flag: string,
  cwd: string,
  expected?: string,
): string | undefined {
  const path = readStringOption(args, flag, expected);
  return path === undefined ? undefined : resolve(cwd, path);
}

/** Inclusive bounds of a number option; `unit` names what it counts, for the message. */
interface NumberOptionRange {
  readonly min: number;
  readonly max?: number;
  readonly integer: boolean;
  readonly unit?: string;
}

/** `--concurrency`: the range of `concurrency` in schemas/config.schema.json (a unit test holds it). */
export const CONCURRENCY_RANGE: NumberOptionRange = { min: 1, max: 64, integer: true };

/** `--rate`, as in schemas/config.schema.json: below about 5e-7 req/s Node's timer overflows at 1/rate s. */
export const RATE_RANGE: NumberOptionRange = {
  min: 0.001,
  integer: false,
  unit: 'a number of requests per second',
};

/** The one range check of numeric flags: "Expected --concurrency to be an integer from 1 to 64, got 0". */
export function checkNumberOption(
  value: unknown,
  flag: string,
  range: NumberOptionRange,
  given: string = describeGiven(value),
): number {
  const max = range.max ?? Number.POSITIVE_INFINITY;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < range.min ||
    value > max ||
    (range.integer && !Number.isInteger(value))
  ) {
    const kind = range.unit ?? (range.integer ? 'an integer' : 'a number');
    const bounds = range.max === undefined ? `>= ${range.min}` : `from ${range.min} to ${range.max}`;
    throw new UsageError(`Expected --${flag} to be ${kind} ${bounds}, got ${given}`, {
      hint: 'See --help',
    });
  }
  return value;
}

/** A number option checked against `range`; undefined when absent. */
export function readNumberOption(
  args: Readonly<Record<string, unknown>>,
  flag: string,
  range: NumberOptionRange,
): number | undefined {
  const value = args[keyOf(flag)];
  return value === undefined ? undefined : checkNumberOption(value, flag, range);
}

/** An option that takes a text value (`--report FILE`). */
export function stringOption(describe: string, more: Options = {}): Options {
  return { type: 'string', requiresArg: true, describe, ...more };
}

/** An option that takes a number (`--concurrency N`). */
export function numberOption(describe: string): Options {
  return { type: 'number', requiresArg: true, describe };
}

/** A repeatable text option (`--where A --where B`). */
export function listOption(describe: string): Options {
  return stringOption(describe, { array: true });
}

/** `--format` of a command whose formats are `choices`. */
export function formatOption(choices: readonly string[], describe: string): Options {
  return { type: 'string', choices, describe };
}

/** A switch (`--dry-run`). */
export function booleanOption(describe: string, more: Options = {}): Options {
  return { type: 'boolean', describe, ...more };
}

/** `--rate`, read from its text so that the message quotes what was typed (`got fast`). */
export function readRateOption(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const rate = typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
  return checkNumberOption(rate, 'rate', RATE_RANGE, String(value));
}

export const SORT_OPTION = stringOption('Sort by FIELD, FIELD:asc or FIELD:desc');

/** `--sort field[:asc|desc]`, checked and normalised to the client's `field:asc|desc` form. */
export function parseSortOption(text: string): string {
  const m = /^\s*([A-Za-z_$][\w$.]*)\s*(?::\s*(asc|desc)\s*)?$/i.exec(text);
  if (m === null || m[1] === undefined) {
    throw new UsageError(`Expected --sort to be FIELD, FIELD:asc or FIELD:desc, got ${JSON.stringify(text)}`);
  }
  return `${m[1]}:${(m[2] ?? 'asc').toLowerCase()}`;
}
