/**
 * Option parsing shared by every command, so the same kind of option behaves the same everywhere:
 * list options (`--type a,b --type c`, positional `ID1,ID2 ID3`) and the text of a bad value in a
 * usage message.
 */
import { UsageError } from '../errors.js';

/**
 * How a bad option value is shown in "Expected --x to be ..., got VALUE". yargs turns a non-numeric
 * value of a number option into NaN, which JSON would print as `null`: say what it is instead.
 */
export function describeGiven(value: unknown): string {
  if (typeof value === 'number' && Number.isNaN(value)) return 'a value that is not a number';
  if (Array.isArray(value) && value.length > 1) return `${value.length} values (give it once)`;
  return JSON.stringify(value) ?? String(value);
}

/** Split on commas; `\,` is a literal comma (policy names may hold one). Items are trimmed, empties kept. */
function splitEscaped(value: string): string[] {
  const items: string[] = [];
  let current = '';
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (ch === '\\' && value[i + 1] === ',') {
      current += ',';
      i++;
    } else if (ch === ',') {
      items.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  items.push(current);
  return items.map((s) => s.trim());
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
  const raw = (Array.isArray(value) ? value : [value]).map(String);
  const items = raw.flatMap(splitEscaped);
  if (items.length === 0 || items.some((v) => v === '')) {
    throw new UsageError(
      `Expected ${name} to be a comma-separated list of values, got ${JSON.stringify(raw.join(' '))}`,
      { hint: 'Remove the empty item (a trailing comma or an empty variable)' },
    );
  }
  return [...new Set(items)];
}
