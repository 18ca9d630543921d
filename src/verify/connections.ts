import { compareNames } from '../connections/match.js';
import { createStreamingDiff } from '../diff/stream.js';
import type { DiffOptions } from '../diff/types.js';
import type { Connection } from '../model/connection.js';
import type { TestTarget } from './test-connections.js';
import { readRecordedTest, type VerifyItem, type VerifyState } from './verdict.js';

export interface ConnectionVerdicts {
  /** Every connection of either side, in name order. */
  readonly items: VerifyItem[];
  /** Present connections as the environment holds them, to test; empty unless kept. */
  readonly present: TestTarget[];
  /** The environment's connection names by id, for its scan profiles. */
  readonly nameById: ReadonlyMap<string, string>;
  readonly counts: { readonly snapshot: number; readonly environment: number };
}

/** A verify's connections via diff's streaming differ: snapshot, then streamed export (none held whole). */
export interface ConnectionVerifier {
  /** A snapshot connection, and how to read it again, as compared, when its twin arrives. */
  expect(entry: Connection, again: () => Connection): void;
  add(actual: Connection): void;
  /** @throws UsageError when the environment held two connections of one name. */
  finish(): ConnectionVerdicts;
}

/** `keepPresent`: keep the present connections for `--test-connections`. */
export function createConnectionVerifier(options: DiffOptions, keepPresent: boolean): ConnectionVerifier {
  const items: VerifyItem[] = [];
  const present: TestTarget[] = [];
  const nameById = new Map<string, string>();
  const differ = createStreamingDiff({
    ...options,
    sides: { from: 'The snapshot', to: 'The environment', command: 'verify' },
    complete: 'from',
    onPair(entry, actual, outcome) {
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
  });
  return {
    expect: (entry, again) => differ.add('from', entry, again),
    add(actual) {
      if (typeof actual._id === 'string') nameById.set(actual._id, actual.name);
      differ.add('to', actual);
    },
    finish() {
      const { result, counts, typeOf } = differ.finish();
      const one = (state: VerifyState) => (name: string) =>
        ({ object: 'connection', name, type: typeOf(name), state }) as const;
      items.push(...result.added.map(one('missing')), ...result.removed.map(one('extra')));
      items.sort((a, b) => compareNames(a.name, b.name));
      present.sort((a, b) => compareNames(a.connection.name, b.connection.name));
      return { items, present, nameById, counts: { snapshot: counts.from, environment: counts.to } };
    },
  };
}
