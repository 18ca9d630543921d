/**
 * The diff fed by a merge join (`src/snapshot/merge.ts`): every name arrives once, in name order,
 * with its connection on one side or both, so nothing waits and nothing needs sorting (pure: no fs,
 * no HTTP). A pair whose snapshot lines were byte-equal arrives as one line: it is unchanged, and
 * only its masked values are looked for, and only when its line holds the mask's text.
 *
 * The result equals {@link diffConnections} of the same two sides (a snapshot holds no duplicate
 * name: its reader refuses one).
 */
import { compareNames } from '../connections/match.js';
import { isServerManagedField } from '../connections/server-managed.js';
import type { Connection } from '../model/connection.js';
import { MASK } from '../secrets.js';
import { compareConnections, compileCompareOptions } from './compare.js';
import { formatPointer } from './pointer.js';
import type { StreamingDiffResult } from './stream.js';
import type { ChangedConnection, DiffOptions, UncomparableField } from './types.js';

const MASK_TEXT = JSON.stringify(MASK);

/**
 * A bound on how many values of a line's entry are the mask: the occurrences of its JSON text (a key
 * that is the mask, or an escaped quote before one, only adds to it). Undefined when the line holds a
 * `\u` escape, which could spell a mask otherwise (JSON.stringify escapes neither `"` nor `*` so).
 */
function maskTokensIn(line: Buffer): number | undefined {
  if (line.includes('\\u')) return undefined;
  let count = 0;
  for (let at = line.indexOf(MASK_TEXT); at >= 0; at = line.indexOf(MASK_TEXT, at + MASK_TEXT.length))
    count++;
  return count;
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
  const uncomparable: UncomparableField[] = [];
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
      // The usual case, decided without a walk: as many top-level masks as the line's bound, so none
      // below; each is uncomparable unless its field is not compared (compareConnections' order).
      const top = Object.keys(entry).filter((key) => entry[key] === MASK);
      const paths =
        tokens === top.length
          ? top
              .filter((key) => !isServerManagedField(key) && !compare.ignore.ignoresPath([key]))
              .sort(compareNames)
              .map((key) => formatPointer([key]))
          : compareConnections(entry, entry, compare).uncomparable;
      for (const path of paths) uncomparable.push({ name: entry.name, path });
    },
    both(from, to) {
      next(from.name);
      counts.from++;
      counts.to++;
      const outcome = compareConnections(from, to, compare);
      for (const path of outcome.uncomparable) uncomparable.push({ name: from.name, path });
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
