/**
 * The diff fed one connection at a time from both sides in any order (pure), for `diff` against an
 * environment and `verify`. It holds only what is unpaired, and every name seen (to refuse one twice).
 */
import { compareNames } from '../connections/match.js';
import type { Connection } from '../model/connection.js';
import {
  type CompareOptions,
  compareConnections,
  compileCompareOptions,
  type PairComparison,
  refuseDuplicateNames,
} from './compare.js';
import { MaskedFields } from './masked-fields.js';
import type { ChangedConnection, DiffOptions, DiffResult } from './types.js';

export type DiffSideName = 'from' | 'to';

export interface StreamingDiffResult {
  readonly result: DiffResult;
  /** Connections read per side. */
  readonly counts: { readonly from: number; readonly to: number };
  /** The type of a connection the result names (a removed one's `to` type, else its `from` type). */
  readonly typeOf: (name: string) => string | undefined;
}

export interface StreamingDiff {
  /** One connection of `side`; `again`, when given, is kept instead of it while it waits for its twin. */
  add(side: DiffSideName, entry: Connection, again?: () => Connection): void;
  /** @throws UsageError when a side held two connections of one name. */
  finish(): StreamingDiffResult;
}

/** A connection waiting for its twin: neither `again` nor `entry` when none can come. */
interface Waiting {
  readonly type: string;
  readonly again?: () => Connection;
  readonly entry?: Connection;
}

interface SideState {
  readonly waiting: Map<string, Waiting>;
  readonly seen: Set<string>;
  readonly duplicates: Set<string>;
  count: number;
}

function createSide(): SideState {
  return { waiting: new Map(), seen: new Set(), duplicates: new Set(), count: 0 };
}

export interface StreamingDiffOptions extends DiffOptions {
  readonly onPair?: (from: Connection, to: Connection, outcome: PairComparison) => void;
  /** How a side holding a name twice is named (default: the --from and --to sides of diff). */
  readonly sides?: { readonly from: string; readonly to: string; readonly command: 'diff' | 'verify' };
  /** A side added whole first: a connection of the other side that finds no twin keeps only its type. */
  readonly complete?: DiffSideName;
}

/** @throws UsageError when an ignore rule is neither a field name nor a JSON pointer. */
export function createStreamingDiff(options: StreamingDiffOptions = {}): StreamingDiff {
  const compare: CompareOptions = compileCompareOptions(options);
  const sides: Record<DiffSideName, SideState> = { from: createSide(), to: createSide() };
  const changed: ChangedConnection[] = [];
  const changedTypes = new Map<string, string>();
  const uncomparable = new MaskedFields();
  let unchanged = 0;

  const comparePair = (from: Connection, to: Connection): void => {
    const outcome = compareConnections(from, to, compare);
    options.onPair?.(from, to, outcome);
    uncomparable.add(from.name, outcome.uncomparable);
    if (outcome.fields.length === 0) unchanged++;
    else {
      changed.push({ name: from.name, fields: outcome.fields });
      changedTypes.set(from.name, from.type);
    }
  };

  const differ: StreamingDiff = {
    add(side, entry, again) {
      const own = sides[side];
      const other = sides[side === 'from' ? 'to' : 'from'];
      own.count++;
      const name = entry.name;
      if (own.seen.has(name)) {
        // The first one of a name is the one compared; finish() refuses the name anyway.
        own.duplicates.add(name);
        return;
      }
      own.seen.add(name);
      const twin = other.waiting.get(name);
      if (twin === undefined) {
        own.waiting.set(
          name,
          options.complete !== undefined && options.complete !== side
            ? { type: entry.type }
            : again !== undefined
              ? { type: entry.type, again }
              : { type: entry.type, entry },
        );
        return;
      }
      other.waiting.delete(name);
      const parsed = twin.entry ?? twin.again?.();
      if (parsed === undefined) throw new Error('a connection was added to a side declared complete');
      if (side === 'from') comparePair(entry, parsed);
      else comparePair(parsed, entry);
    },
    finish() {
      const named = options.sides ?? { from: 'The --from side', to: 'The --to side', command: 'diff' };
      refuseDuplicateNames(named.from, [...sides.from.duplicates].sort(compareNames), named.command);
      refuseDuplicateNames(named.to, [...sides.to.duplicates].sort(compareNames), named.command);
      const byName = (x: { readonly name: string }, y: { readonly name: string }) =>
        compareNames(x.name, y.name);
      changed.sort(byName);
      uncomparable.sortByName();
      const added = sides.from.waiting;
      return {
        result: {
          added: [...added.keys()].sort(compareNames),
          removed: [...sides.to.waiting.keys()].sort(compareNames),
          changed,
          unchanged,
          uncomparable,
        },
        counts: { from: sides.from.count, to: sides.to.count },
        typeOf: (name) => (added.get(name) ?? sides.to.waiting.get(name))?.type ?? changedTypes.get(name),
      };
    },
  };
  return differ;
}
