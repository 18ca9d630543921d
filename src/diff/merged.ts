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
import type { Connection } from '../model/connection.js';
import { MASK } from '../secrets.js';
import { compareConnections, compileCompareOptions } from './compare.js';
import type { StreamingDiffResult } from './stream.js';
import type { ChangedConnection, DiffOptions, UncomparableField } from './types.js';

/**
 * A snapshot line that may hold a masked value: the mask's JSON text, or a `\u` escape (which could
 * spell it otherwise; JSON.stringify writes neither `"` nor `*` so).
 */
const MASK_TEXT = JSON.stringify(MASK);
const mayHoldMask = (line: Buffer) => line.includes(MASK_TEXT) || line.includes('\\u');

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
      if (!mayHoldMask(line)) return;
      for (const path of compareConnections(entry, entry, compare).uncomparable)
        uncomparable.push({ name: entry.name, path });
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
