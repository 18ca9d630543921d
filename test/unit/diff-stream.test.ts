/**
 * The streaming differ (src/diff/stream.ts) fed in any interleaving, against the same differ fed each
 * side whole (diffConnections, test/helpers): the same result for any interleaving of the two sides and
 * any order within each, and the same refusal of duplicate names.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createStreamingDiff } from '../../src/diff/stream.js';
import { UsageError } from '../../src/errors.js';
import type { Connection } from '../../src/model/connection.js';
import { fixturesDir } from '../../src/paths.js';
import { MASK } from '../../src/secrets.js';
import { diffConnections } from '../helpers/diff-arrays.js';

const options = {
  ignoreFields: ['/owners_v2/*/origin'],
  secretFields: (type: string) => new Set(type === 'rdb-mysql' ? ['password'] : []),
};

/** Feed `from` and `to` to a streaming differ in the order `picks` says (true: next of from). */
function streamDiff(from: readonly Connection[], to: readonly Connection[], picks: readonly boolean[]) {
  const differ = createStreamingDiff(options);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < from.length || j < to.length) {
    const takeFrom = j >= to.length || (i < from.length && (picks[k++ % Math.max(1, picks.length)] ?? true));
    if (takeFrom) differ.add('from', from[i++] as Connection);
    else differ.add('to', to[j++] as Connection);
  }
  return differ.finish();
}

describe('createStreamingDiff', () => {
  const value = fc.oneof(
    fc.string({ maxLength: 3 }),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant(MASK),
  );
  const entry = fc.record({
    name: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g'),
    type: fc.constantFrom('s3', 'rdb-mysql'),
    description: value,
    password: value,
    owners_v2: fc.array(
      fc.record({ email: fc.constantFrom('x', 'y'), origin: fc.string({ maxLength: 2 }) }),
      {
        maxLength: 2,
      },
    ),
  });
  const unique = (list: Connection[]) => [...new Map(list.map((c) => [c.name, c])).values()];

  it('equals diffConnections for any interleaving and any order of either side', () => {
    fc.assert(
      fc.property(
        fc.array(entry, { maxLength: 7 }),
        fc.array(entry, { maxLength: 7 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 10 }),
        (a, b, picks) => {
          const from = unique(a as Connection[]);
          const to = unique(b as Connection[]);
          const expected = diffConnections(from, to, options);
          const streamed = streamDiff(from, to, picks);
          expect(streamed.result).toEqual(expected);
          expect(streamed.counts).toEqual({ from: from.length, to: to.length });
          for (const name of expected.added)
            expect(streamed.typeOf(name)).toBe(from.find((c) => c.name === name)?.type);
        },
      ),
    );
  });

  it('equals diffConnections on the shipped environments (prod against dr-partial, both ways)', () => {
    const dir = join(fixturesDir(), 'environments');
    const read = (name: string) =>
      (JSON.parse(readFileSync(join(dir, name), 'utf8')) as { connections: Connection[] }).connections;
    const names = readdirSync(dir).filter((n) => n.endsWith('.json'));
    expect(names.length).toBeGreaterThan(1);
    const prod = read('prod.json');
    const dr = read('dr-partial.json');
    for (const [from, to] of [
      [prod, dr],
      [dr, prod],
    ] as const) {
      expect(streamDiff(from, [...to].reverse(), [true, false]).result).toEqual(
        diffConnections(from, to, options),
      );
    }
  });

  it('equals diffConnections when every connection of one side waits for its twin', () => {
    const n = 10_500;
    const from: Connection[] = [];
    const to: Connection[] = [];
    for (let i = 0; i < n; i++) {
      const name = `c${String(i).padStart(5, '0')}`;
      from.push({
        name,
        type: i % 2 ? 'rdb-mysql' : 's3',
        password: 'p',
        owners_v2: [{ email: 'x', origin: 'o' }],
      });
      if (i % 7 !== 0)
        to.push({
          name,
          type: i % 2 ? 'rdb-mysql' : 's3',
          password: i % 5 ? 'p' : MASK,
          owners_v2: [{ email: i % 11 ? 'x' : 'y', origin: 'z' }],
        });
    }
    to.push({ name: 'only-to', type: 's3' });
    // Every `from` first: all of them wait; then `to` in reverse.
    const differ = createStreamingDiff(options);
    for (const c of from) differ.add('from', c);
    for (const c of [...to].reverse()) differ.add('to', c);
    const streamed = differ.finish();
    expect(streamed.result).toEqual(diffConnections(from, to, options));
    expect(streamed.result.changed.length).toBeGreaterThan(0);
    expect(streamed.typeOf('c00007')).toBe('rdb-mysql');
  });

  it('reads a waiting connection again through `again` when one is given, instead of keeping it', () => {
    const n = 10_050;
    const from: Connection[] = [];
    for (let i = 0; i < n; i++)
      from.push({ name: `c${String(i).padStart(5, '0')}`, type: 's3', description: 'd' });
    const to = from.map((c, i) => (i % 10 === 0 ? { ...c, description: 'changed' } : c));
    const differ = createStreamingDiff(options);
    let rereads = 0;
    for (const c of from)
      differ.add('from', c, () => {
        rereads++;
        return structuredClone(c);
      });
    for (const c of to) differ.add('to', c);
    expect(differ.finish().result).toEqual(diffConnections(from, to, options));
    // Every one waited as a way to read it again.
    expect(rereads).toBe(n);
  });

  it('keeps only the name and type of a connection no twin can come for (the other side complete)', () => {
    const from: Connection[] = [
      { name: 'a', type: 's3', description: 'one' },
      { name: 'b', type: 's3' },
    ];
    const to: Connection[] = [
      { name: 'a', type: 's3', description: 'two' },
      { name: 'extra', type: 'rdb-mysql', description: 'only here' },
    ];
    const differ = createStreamingDiff({ ...options, complete: 'from' });
    for (const c of from) differ.add('from', c);
    for (const c of to) differ.add('to', c);
    const found = differ.finish();
    expect(found.result).toEqual(diffConnections(from, to, options));
    expect(found.typeOf('extra')).toBe('rdb-mysql');
    // Nothing of the extra connection is kept to be compared: adding its twin now is a caller's bug.
    const late = createStreamingDiff({ complete: 'from' });
    late.add('to', { name: 'x', type: 's3' });
    expect(() => late.add('from', { name: 'x', type: 's3' })).toThrow(/declared complete/);
  });

  it('refuses a side holding a name twice, as diffConnections does', () => {
    const differ = createStreamingDiff();
    differ.add('from', { name: 'x', type: 's3' });
    differ.add('to', { name: 'x', type: 's3' });
    differ.add('to', { name: 'x', type: 's3', description: 'again' });
    expect(() => differ.finish()).toThrow(UsageError);
    expect(() => differ.finish()).toThrow(/--to side holds more than one connection named "x"/);
  });
});
