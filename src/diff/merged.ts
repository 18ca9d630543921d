/**
 * The diff fed by a merge join (`src/snapshot/merge.ts`): every name arrives once, in name order,
 * with its connection on one side or both, so nothing waits and nothing needs sorting (pure: no fs,
 * no HTTP). A pair whose snapshot lines were byte-equal arrives as one line: it is unchanged, and
 * only its masked values are looked for, and only when its line holds a mask at all.
 *
 * The result equals {@link diffConnections} of the same two sides (a snapshot holds no duplicate
 * name: its reader refuses one).
 */
import { compareNames } from '../connections/match.js';
import type { Connection } from '../model/connection.js';
import { MASK } from '../secrets.js';
import {
  type CompareOptions,
  compareConnections,
  compileCompareOptions,
  createMaskFinder,
  type MaskSource,
} from './compare.js';
import type { StreamingDiffResult } from './stream.js';
import type { ChangedConnection, DiffOptions, UncomparableField } from './types.js';

/**
 * Byte-equal lines of both sides, as the merge join hands them out (`EqualLines` of
 * `src/snapshot/merge.ts`): the connection's name and type, the line, and the connection.
 */
export interface SameLines extends MaskSource {
  readonly name: string;
  readonly bytes: Buffer;
}

/** A diff fed in name order. */
export interface MergedDiff {
  /** A connection whose lines are byte for byte the same on both sides (parsed only if its masks need it). */
  same(lines: SameLines): void;
  /** A name on both sides. */
  both(from: Connection, to: Connection): void;
  /** A name on one side only. */
  only(side: 'from' | 'to', entry: Connection): void;
  /** The result, once both sides are read whole. */
  finish(): StreamingDiffResult;
}

const QUOTE = 0x22;
const STAR = 0x2a;
const BACKSLASH = 0x5c;
const LETTER_U = 0x75;
/** The mask's characters between its quotes: all `*`. */
const MASK_STARS = MASK.length;

/**
 * A bound on how many values of a JSON line's entry are the mask (0: none): the occurrences of the
 * mask's text with its quotes, `"******"`. A value that is the mask is written so, unless with `\u`
 * escapes (no other escape writes a `*`); a key that is the mask, or a string holding an escaped
 * quote, may add to the count, which stays a bound. Undefined when the line holds a `\u` escape.
 * Searched by the mask's first `*` (a search for one byte is several times faster than for a string).
 */
export function maskTokensIn(line: Buffer): number | undefined {
  // An escape is a backslash and the character after it (`\\u` is an escaped backslash, then a u).
  for (let at = line.indexOf(BACKSLASH); at >= 0; at = line.indexOf(BACKSLASH, at + 2))
    if (line[at + 1] === LETTER_U) return undefined;
  let count = 0;
  for (let at = line.indexOf(STAR); at >= 0; at = line.indexOf(STAR, at)) {
    let end = at;
    while (line[end] === STAR) end++;
    if (line[at - 1] === QUOTE && line[end] === QUOTE && end - at === MASK_STARS) count++;
    at = end;
  }
  return count;
}

/**
 * Start a diff fed in name order.
 *
 * @throws UsageError when an ignore rule is neither a field name nor a JSON pointer.
 */
export function createMergedDiff(options: DiffOptions = {}): MergedDiff {
  const compare: CompareOptions = compileCompareOptions(options);
  const masksOf = createMaskFinder(compare);
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
    same(lines) {
      next(lines.name);
      counts.from++;
      counts.to++;
      unchanged++;
      for (const path of masksOf(lines, maskTokensIn(lines.bytes)))
        uncomparable.push({ name: lines.name, path });
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
