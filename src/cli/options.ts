/**
 * Option parsing shared by every command, so the same kind of option behaves the same everywhere:
 * list options (`--type a,b --type c`, positional `ID1,ID2 ID3`) and the text of a bad value in a
 * usage message.
 */
import type { Options } from 'yargs';
import { UsageError } from '../errors.js';
import { splitListValues } from '../list-values.js';

/**
 * How a bad option value is shown in "Expected --x to be ..., got VALUE". yargs turns a non-numeric
 * value of a number option into NaN, which JSON would print as `null`: say what it is instead.
 */
export function describeGiven(value: unknown): string {
  if (typeof value === 'number' && Number.isNaN(value)) return 'a value that is not a number';
  if (Array.isArray(value) && value.length > 1) return `${value.length} values (give it once)`;
  return JSON.stringify(value) ?? String(value);
}

/**
 * A repeatable, comma-separated list option (`--type a,b --type c`, or positional `ID1,ID2 ID3`) as its
 * values, in order, without repeats; undefined when the option is absent. An empty item (`--type ''`,
 * `--type s3,`) is a usage error rather than silently dropped: it usually means a shell variable was
 * empty, and dropping it could widen the selection to everything. `name` is how the option is shown
 * (`--type`, `IDS`).
 */
export function parseListOption(value: unknown, name: string): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const items = splitListValues(value);
  if (items.length === 0 || items.some((v) => v === '')) {
    const raw = (Array.isArray(value) ? value : [value]).map(String);
    throw new UsageError(
      `Expected ${name} to be a comma-separated list of values, got ${JSON.stringify(raw.join(' '))}`,
      { hint: 'Remove the empty item (a trailing comma or an empty variable)' },
    );
  }
  return [...new Set(items)];
}

/**
 * A string option that, when given, must be one non-empty string (`--ca-file ''` usually means an empty
 * shell variable; given twice it is an array); undefined when absent. `key` is the camel-case key yargs
 * parsed it to, `flag` its name without dashes, `expected` what it should be, for the message:
 * "Expected --ca-file to be a non-empty value, got """. The value is quoted in the message: don't use
 * it for an option whose value is a secret.
 */
export function readStringOption(
  args: Readonly<Record<string, unknown>>,
  key: string,
  flag: string,
  expected = 'a non-empty value',
): string | undefined {
  const value = args[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim() === '') {
    throw new UsageError(`Expected --${flag} to be ${expected}, got ${JSON.stringify(value)}`, {
      hint: 'See --help',
    });
  }
  return value;
}

/** Bounds of {@link readNumberOption}. */
export interface NumberOptionRange {
  /** Smallest allowed value (inclusive). */
  readonly min: number;
  /** Largest allowed value (inclusive); default: no limit. */
  readonly max?: number;
  /** True when only integers are allowed. */
  readonly integer: boolean;
}

/**
 * A number option (declared `type: 'number'`) checked against `range`; undefined when absent. A value
 * out of range, not a number (yargs' NaN) or given twice is a usage error such as "Expected
 * --page-size to be an integer >= 1, got 0". `key`/`flag` as in {@link readStringOption}.
 */
export function readNumberOption(
  args: Readonly<Record<string, unknown>>,
  key: string,
  flag: string,
  range: NumberOptionRange,
): number | undefined {
  const value = args[key];
  if (value === undefined) return undefined;
  const { min, integer } = range;
  const max = range.max ?? Number.POSITIVE_INFINITY;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < min ||
    value > max ||
    (integer && !Number.isInteger(value))
  ) {
    throw new UsageError(
      `Expected --${flag} to be ${integer ? 'an integer' : 'a number'} >= ${min}${
        max === Number.POSITIVE_INFINITY ? '' : ` and <= ${max}`
      }, got ${describeGiven(value)}`,
    );
  }
  return value;
}

/** The `--sort` option of list commands; parse its value with {@link parseSortOption}. */
export const SORT_OPTION = {
  type: 'string',
  requiresArg: true,
  describe: 'Sort by FIELD, FIELD:asc or FIELD:desc',
} as const satisfies Options;

/** `--sort field[:asc|desc]`, checked and normalised to the client's `field:asc|desc` form. */
export function parseSortOption(text: string): string {
  const m = /^\s*([A-Za-z_$][\w$.]*)\s*(?::\s*(asc|desc)\s*)?$/i.exec(text);
  if (m === null || m[1] === undefined) {
    throw new UsageError(`Expected --sort to be FIELD, FIELD:asc or FIELD:desc, got ${JSON.stringify(text)}`);
  }
  return `${m[1]}:${(m[2] ?? 'asc').toLowerCase()}`;
}
