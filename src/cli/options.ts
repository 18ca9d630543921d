/**
 * Option parsing shared by every command, so the same kind of option behaves the same everywhere:
 * list options (`--type a,b --type c`, positional `ID1,ID2 ID3`) and the text of a bad value in a
 * usage message.
 */
import { resolve } from 'node:path';
import type { Options } from 'yargs';
import { UsageError } from '../errors.js';
import { type ListItems, splitListValues } from '../list-values.js';

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
 * (`--type`, `IDS`); `items` is `exact` for a list of names, kept with their spaces.
 */
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

/** The key yargs parses `--flag` to: `ca-file` -> `caFile`. */
function keyOf(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/**
 * A string option that, when given, must be one non-empty string (`--ca-file ''` usually means an empty
 * shell variable; given twice it is an array); undefined when absent. `flag` is its name without dashes,
 * `expected` what it should be, for the message: "Expected --ca-file to be a non-empty value, got """.
 * The value is quoted in the message: don't use it for an option whose value is a secret.
 */
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

/** Bounds of {@link readNumberOption}. */
export interface NumberOptionRange {
  /** Smallest allowed value (inclusive). */
  readonly min: number;
  /** Largest allowed value (inclusive); default: no limit. */
  readonly max?: number;
  /** True when only integers are allowed. */
  readonly integer: boolean;
  /** What the number counts, for the message: `a number of requests per second`. */
  readonly unit?: string;
}

/**
 * `--concurrency`: the same range as `concurrency` in schemas/config.schema.json (1 to 64; a unit
 * test holds the two together).
 */
export const CONCURRENCY_RANGE: NumberOptionRange = { min: 1, max: 64, integer: true };

/**
 * `--rate`: the same range as `rate` in schemas/config.schema.json. The lower bound keeps the pause
 * between two requests (1/rate s) within what a timer can wait: below about 5e-7 req/s Node's timer
 * overflows and fires at once (`--rate 1e-7` sent 6 creates in half a second).
 */
export const RATE_RANGE: NumberOptionRange = {
  min: 0.001,
  integer: false,
  unit: 'a number of requests per second',
};

/** "an integer from 1 to 64", "a number >= 0.001": the range as a message says it. */
function describeRange(range: NumberOptionRange): string {
  const kind = range.unit ?? (range.integer ? 'an integer' : 'a number');
  return range.max === undefined ? `${kind} >= ${range.min}` : `${kind} from ${range.min} to ${range.max}`;
}

/**
 * The one range check of numeric flags: `value` (a number, NaN for text yargs could not read) must be
 * finite, within `range`, and an integer when asked. Otherwise a usage error (exit 2) such as
 * "Expected --concurrency to be an integer from 1 to 64, got 1000000"; `given` is how the value is
 * shown (default {@link describeGiven}).
 */
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
    throw new UsageError(`Expected --${flag} to be ${describeRange(range)}, got ${given}`, {
      hint: 'See --help',
    });
  }
  return value;
}

/**
 * A number option (declared `type: 'number'`) checked against `range` ({@link checkNumberOption});
 * undefined when absent.
 */
export function readNumberOption(
  args: Readonly<Record<string, unknown>>,
  flag: string,
  range: NumberOptionRange,
): number | undefined {
  const value = args[keyOf(flag)];
  if (value === undefined) return undefined;
  return checkNumberOption(value, flag, range);
}

/** An option that takes a text value (`--report FILE`): the declaration most options share. */
export function stringOption(describe: string, more: Options = {}): Options {
  return { type: 'string', requiresArg: true, describe, ...more };
}

/** An option that takes a number (`--concurrency N`), read with {@link readNumberOption}. */
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
export function booleanOption(describe: string): Options {
  return { type: 'boolean', describe };
}

/** `--rate`, read from its text so that the message can quote what was typed (`got fast`). */
export function readRateOption(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const rate = typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
  return checkNumberOption(rate, 'rate', RATE_RANGE, String(value));
}

/** The `--sort` option of list commands; parse its value with {@link parseSortOption}. */
export const SORT_OPTION = stringOption('Sort by FIELD, FIELD:asc or FIELD:desc');

/** `--sort field[:asc|desc]`, checked and normalised to the client's `field:asc|desc` form. */
export function parseSortOption(text: string): string {
  const m = /^\s*([A-Za-z_$][\w$.]*)\s*(?::\s*(asc|desc)\s*)?$/i.exec(text);
  if (m === null || m[1] === undefined) {
    throw new UsageError(`Expected --sort to be FIELD, FIELD:asc or FIELD:desc, got ${JSON.stringify(text)}`);
  }
  return `${m[1]}:${(m[2] ?? 'asc').toLowerCase()}`;
}
