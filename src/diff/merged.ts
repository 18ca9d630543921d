/**
 * The diff fed by a merge join (`src/snapshot/merge.ts`): every name arrives once, in name order,
 * with its connection on one side or both, so nothing waits and nothing needs sorting (pure: no fs,
 * no HTTP). A pair whose snapshot lines were byte-equal arrives as one line: it is unchanged, and
 * only its masked values are looked for, and only when its line holds the mask's text.
 *
 * The result equals the streaming diff's (stream.ts) of the same two sides (a snapshot holds no duplicate
 * name: its reader refuses one).
 */
import { memoizeBounded } from '../bounded-memo.js';
import { compareNames } from '../connections/match.js';
import { isServerManagedField } from '../connections/server-managed.js';
import type { Connection } from '../model/connection.js';
import { MASK } from '../secrets.js';
import { type CompareOptions, compareConnections, compileCompareOptions } from './compare.js';
import { MaskedFields } from './masked-fields.js';
import { keyCustomFields } from './normalize.js';
import { formatPointer } from './pointer.js';
import type { StreamingDiffResult } from './stream.js';
import type { ChangedConnection, DiffOptions } from './types.js';

const MASK_TEXT = Buffer.from(JSON.stringify(MASK));
const QUOTE = MASK_TEXT.readUInt8(0);
const STAR = MASK_TEXT.readUInt8(1);
const BACKSLASH = 0x5c;

/**
 * A bound on how many values of a line's entry are the mask: the occurrences of its JSON text (a key
 * that is the mask, or an escaped quote before one, only adds to it). Undefined when the line holds a
 * `\u` escape, which could spell a mask otherwise (JSON.stringify escapes neither `"` nor `*` so).
 * Each occurrence is found by its first `*`: a search for one byte (memchr) takes a quarter of the
 * time of a search for the mask's text in lines of a few hundred bytes.
 */
function maskTokensIn(line: Buffer): number | undefined {
  if (line.includes(BACKSLASH) && line.includes('\\u')) return undefined;
  let count = 0;
  let after = 0; // the end of the last occurrence: occurrences do not overlap
  for (let at = line.indexOf(STAR); at >= 0; at = line.indexOf(STAR, at + 1)) {
    const start = at - 1;
    const end = start + MASK_TEXT.length;
    if (start < after || end > line.length || line[start] !== QUOTE) continue;
    if (line.compare(MASK_TEXT, 0, MASK_TEXT.length, start, end) !== 0) continue;
    count++;
    after = end;
    at = end - 1;
  }
  return count;
}

/** `/key`, one string per field name (connections masked alike then share their paths). */
const topLevelPointer = memoizeBounded((key: string) => formatPointer([key]), 10_000);

/**
 * The usual case of an entry compared with itself, decided without a walk: when its `tokens` masks are
 * all top-level values or `field_value`s of custom fields keyed by name (a masked password, an encrypted
 * custom field), the paths compareConnections lists as uncomparable, in its order. Undefined otherwise.
 */
function shallowMasks(entry: Connection, tokens: number, compare: CompareOptions): string[] | undefined {
  const a = compare.ignore.removeFromEntry(entry);
  const listed = (path: readonly string[]) => !compare.ignore.ignoresPath(path);
  const found: { key: string; name: string; path: string }[] = [];
  let masks = 0;
  // for...in: a parsed entry has no inherited key, and V8 walks it in about a third of the time of
  // Object.keys and a look-up per key.
  for (const key in a) {
    if (a[key] !== MASK) continue;
    masks++;
    if (!isServerManagedField(key) && listed([key]))
      found.push({ key, name: '', path: topLevelPointer(key) });
  }
  // Custom fields only when the line holds more masks than the top level.
  const fields =
    masks < tokens && Array.isArray(a.custom_fields) ? keyCustomFields(a.custom_fields) : undefined;
  for (const [name, field] of Object.entries(fields ?? {})) {
    if ((field as Record<string, unknown>).field_value !== MASK) continue;
    masks++;
    const path = ['custom_fields', name, 'field_value'];
    if (listed(path.slice(0, 2)) && listed(path))
      found.push({ key: 'custom_fields', name, path: formatPointer(path) });
  }
  if (masks !== tokens) return undefined;
  return found.sort((x, y) => compareNames(x.key, y.key) || compareNames(x.name, y.name)).map((f) => f.path);
}

/** A diff fed in name order (the `MergeSink` of `src/snapshot/merge.ts`). */
export interface MergedDiff {
  /** A connection whose lines are byte for byte the same on both sides, and its line. */
  same(entry: Connection, line: Buffer): void;
  both(from: Connection, to: Connection): void;
  only(side: 'from' | 'to', entry: Connection): void;
  /** The result, once both sides are read whole. */
  finish(): StreamingDiffResult;
}

/**
 * Start a diff fed in name order.
 *
 * @throws UsageError when an ignore rule is neither a field name nor a JSON pointer.
 */
export function createMergedDiff(options: DiffOptions = {}): MergedDiff {
  const compare = compileCompareOptions(options);
  const added: string[] = [];
  const types = new Map<string, string>();
  const removed: string[] = [];
  const changed: ChangedConnection[] = [];
  const uncomparable = new MaskedFields();
  const counts = { from: 0, to: 0 };
  let unchanged = 0;
  let last: string | undefined;

  const next = (name: string) => {
    // The join hands names out in order; anything else is a bug of the caller, not of the data.
    if (last !== undefined && compareNames(last, name) >= 0)
      throw new Error(`merged diff fed out of order: ${JSON.stringify(name)} after ${JSON.stringify(last)}`);
    last = name;
  };

  return {
    same(entry, line) {
      next(entry.name);
      counts.from++;
      counts.to++;
      unchanged++;
      // An equal pair has no changed field; its masks are what it lists as uncomparable.
      const tokens = maskTokensIn(line);
      if (tokens === 0) return;
      uncomparable.add(
        entry.name,
        (tokens === undefined ? undefined : shallowMasks(entry, tokens, compare)) ??
          compareConnections(entry, entry, compare).uncomparable,
      );
    },
    both(from, to) {
      next(from.name);
      counts.from++;
      counts.to++;
      const outcome = compareConnections(from, to, compare);
      uncomparable.add(from.name, outcome.uncomparable);
      if (outcome.fields.length === 0) unchanged++;
      else {
        changed.push({ name: from.name, fields: outcome.fields });
        types.set(from.name, from.type);
      }
    },
    only(side, entry) {
      next(entry.name);
      counts[side]++;
      if (side === 'to') removed.push(entry.name);
      else added.push(entry.name);
      types.set(entry.name, entry.type);
    },
    finish() {
      return {
        result: { added, removed, changed, unchanged, uncomparable },
        counts: { ...counts },
        typeOf: (name) => types.get(name),
      };
    },
  };
}
