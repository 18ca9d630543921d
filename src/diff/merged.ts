/**
 * The diff fed by the merge join of `src/snapshot/merge.ts`, each name once, in order: nothing waits or is
 * sorted (pure). Its result equals stream.ts's for the same sides (a snapshot's reader refuses a name twice).
 * A byte-equal pair is unchanged: its masks are sought only when its line holds the mask's text.
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
 * An upper bound on the masked values of a line (a key that is the mask only adds to it); undefined when a
 * `\u` escape could spell a mask. Found by the first `*`: a one-byte search (memchr) takes a quarter of the
 * time of a search for the mask's text (see bench/README.md, "Masked fields kept per connection").
 */
function maskTokensIn(line: Buffer): number | undefined {
  if (line.includes(BACKSLASH) && line.includes('\\u')) return undefined;
  let count = 0;
  let after = 0; // occurrences do not overlap
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

/** One string per field name: connections masked alike share their paths. */
const topLevelPointer = memoizeBounded((key: string) => formatPointer([key]), 10_000);

/**
 * compareConnections(entry, entry).uncomparable without a walk when all `tokens` masks are top-level
 * values or `field_value`s of custom fields keyed by name; undefined otherwise.
 */
function shallowMasks(entry: Connection, tokens: number, compare: CompareOptions): string[] | undefined {
  const a = compare.ignore.removeFromEntry(entry);
  const listed = (path: readonly string[]) => !compare.ignore.ignoresPath(path);
  const found: { key: string; name: string; path: string }[] = [];
  let masks = 0;
  // for...in: a parsed entry has no inherited key, and V8 walks it in a third of Object.keys' time.
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
  /** A connection whose lines are byte-equal on both sides, and its line. */
  same(entry: Connection, line: Buffer): void;
  both(from: Connection, to: Connection): void;
  only(side: 'from' | 'to', entry: Connection): void;
  finish(): StreamingDiffResult;
}

/** @throws UsageError when an ignore rule is neither a field name nor a JSON pointer. */
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
    // Out of order is the caller's bug, not the data's.
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
