/**
 * The connection half of a verify, fed the environment's connections one at a time as its export
 * streams in. The snapshot's side is held lean: per name its type and a way to read the entry again (a
 * snapshot line's place), so a verify of 100 000 connections holds neither side whole. Each
 * environment connection is compared with its snapshot entry (the comparison of `diff`) when it arrives
 * and dropped; only with `--test-connections` are the present ones kept, to be tested.
 */
import { compareNames } from '../connections/match.js';
import { type CompareOptions, compareConnections, refuseDuplicateNames } from '../diff/compare.js';
import type { Connection } from '../model/connection.js';
import type { TestTarget } from './test-connections.js';
import { readRecordedTest, type VerifyItem } from './verdict.js';

/** A snapshot connection as a verify holds it while the environment streams in. */
export interface ExpectedConnection {
  readonly type: string;
  /** The entry, read again (from the snapshot file, by place). */
  read(): Connection;
}

export interface ConnectionVerdicts {
  /** Every connection of either side, in name order. */
  readonly items: VerifyItem[];
  /** Present and equal connections (the environment's object) with what the snapshot recorded of their last test; empty unless kept. */
  readonly present: TestTarget[];
  /** The environment's connection names by id (scan profiles name their sources by id). */
  readonly nameById: ReadonlyMap<string, string>;
  readonly liveCount: number;
}

/** A verify of connections fed the environment's side one connection at a time, in any order. */
export interface ConnectionVerifier {
  add(actual: Connection): void;
  /** @throws UsageError when the environment held two connections of one name. */
  finish(): ConnectionVerdicts;
}

/** Start one; `keepPresent`: keep the present connections for `--test-connections`. */
export function createConnectionVerifier(
  expected: ReadonlyMap<string, ExpectedConnection>,
  compare: CompareOptions,
  keepPresent: boolean,
): ConnectionVerifier {
  const items: VerifyItem[] = [];
  const present: TestTarget[] = [];
  const nameById = new Map<string, string>();
  let liveCount = 0;
  const seen = new Set<string>();
  const duplicates = new Set<string>();
  return {
    add(actual) {
      liveCount++;
      if (typeof actual._id === 'string') nameById.set(actual._id, actual.name);
      if (seen.has(actual.name)) {
        duplicates.add(actual.name);
        return;
      }
      seen.add(actual.name);
      const twin = expected.get(actual.name);
      if (twin === undefined) {
        items.push({ object: 'connection', name: actual.name, type: actual.type, state: 'extra' });
        return;
      }
      const entry = twin.read();
      const outcome = compareConnections(entry, actual, compare);
      const different = outcome.fields.length > 0;
      items.push({
        object: 'connection',
        name: entry.name,
        type: actual.type,
        state: different ? 'different' : 'present',
        ...(different ? { fields: outcome.fields } : {}),
        ...(outcome.uncomparable.length > 0 ? { notComparable: outcome.uncomparable } : {}),
      });
      if (!different && keepPresent) present.push({ connection: actual, recorded: readRecordedTest(entry) });
    },
    finish() {
      refuseDuplicateNames('The environment', [...duplicates].sort(compareNames), 'verify');
      for (const [name, twin] of expected) {
        if (!seen.has(name)) items.push({ object: 'connection', name, type: twin.type, state: 'missing' });
      }
      items.sort((a, b) => compareNames(a.name, b.name));
      present.sort((a, b) => compareNames(a.connection.name, b.connection.name));
      return { items, present, nameById, liveCount };
    },
  };
}
