/**
 * Two snapshots diffed by a merge join (src/snapshot/merge.ts into src/diff/merged.ts) against the
 * streaming diff fed each side whole (diffConnections, test/helpers): the same result for any two
 * sides, byte-equal lines parsed once and never compared field by field.
 */
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { createMergedDiff } from '../../src/diff/merged.js';
import type { DiffOptions } from '../../src/diff/types.js';
import { InputFileError, InterruptedError } from '../../src/errors.js';
import type { Connection } from '../../src/model/connection.js';
import { MASK } from '../../src/secrets.js';
import { mergeSnapshots } from '../../src/snapshot/merge.js';
import { diffConnections } from '../helpers/diff-arrays.js';
import { writeSnapshotFile } from '../helpers/snapshot-file.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let dir: string;
beforeEach(async () => {
  dir = await makeTempDir('dds-migrate-merge-');
});

const options = {
  ignoreFields: ['/owners_v2/*/origin', '/custom_fields/k2/field_value', '/cfg/list/0'],
  secretFields: (type: string) => new Set(type === 'rdb-mysql' ? ['password', 'cfg'] : []),
};

/** A snapshot file of `entries` in the test's folder. */
function writeSnapshotAt(
  name: string,
  entries: readonly Connection[],
  formatVersion: 1 | 2 = 2,
): Promise<string> {
  return writeSnapshotFile(join(dir, name), entries, { formatVersion });
}

/** Merge two files into a merged diff; the steps are kept to look at. */
async function mergeDiff(fromPath: string, toPath: string, diffOptions: DiffOptions = options) {
  const differ = createMergedDiff(diffOptions);
  const steps: ('same' | 'both' | 'from' | 'to')[] = [];
  const read = await mergeSnapshots(
    { path: fromPath, label: 'from.jsonl' },
    { path: toPath, label: 'to.jsonl' },
    {
      same(entry, line) {
        steps.push('same');
        differ.same(entry, line);
      },
      both(from, to) {
        steps.push('both');
        differ.both(from, to);
      },
      only(side, entry) {
        steps.push(side);
        differ.only(side, entry);
      },
    },
    { chunkSize: 256 },
  );
  return { found: differ.finish(), steps, read };
}

// A JSON value with masks in it, nested a little.
const leaf = fc.oneof(
  fc.string({ maxLength: 3 }),
  fc.integer({ min: -5, max: 5 }),
  fc.boolean(),
  fc.constant(null),
  fc.constant(MASK),
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('a', 'b', 'token', 'list', 'x/y', 'p~q'), tie('value'), { maxKeys: 3 }),
  ),
}));
const customField = fc.record({
  field_name: fc.constantFrom('k1', 'k2', 'k3'),
  field_type: fc.constantFrom('encrypted', 'clear'),
  field_value: leaf,
});
const entryFields = fc.record(
  {
    type: fc.constantFrom('s3', 'rdb-mysql'),
    _id: leaf,
    description: leaf,
    password: value,
    secret_key: value,
    cfg: value,
    other: value,
    custom_fields: fc.oneof(fc.array(customField, { maxLength: 3 }), value),
    owners_v2: fc.array(fc.record({ email: fc.constantFrom('x', MASK), origin: leaf }), { maxLength: 2 }),
    tags: fc.array(leaf, { maxLength: 2 }),
  },
  { requiredKeys: ['type'] },
);

describe('mergeSnapshots into createMergedDiff', () => {
  // `to` is built from `from`: each connection kept as is (a byte-equal line), edited, or dropped,
  // plus connections of its own.
  const sides = fc
    .uniqueArray(fc.record({ name: fc.stringMatching(/^[a-f]{1,3}$/), fields: entryFields }), {
      selector: (e) => e.name,
      maxLength: 12,
    })
    .chain((from) =>
      fc.record({
        from: fc.constant(from.map((e) => ({ name: e.name, ...e.fields }) as Connection)),
        fates: fc.array(fc.constantFrom('same', 'same', 'edit', 'drop'), {
          minLength: from.length,
          maxLength: from.length,
        }),
        extra: fc.uniqueArray(fc.record({ name: fc.stringMatching(/^[a-f]{1,3}$/), fields: entryFields }), {
          selector: (e) => e.name,
          maxLength: 4,
        }),
        edit: entryFields,
      }),
    );

  it('equals diffConnections of the same two sides, byte-equal lines handed out as one step', async () => {
    // Without ignore rules, with top-level ones, and with pointer rules.
    const ruleSets = fc.constantFrom(
      [],
      ['password', 'description'],
      options.ignoreFields,
      ['/*'],
      ['/password', '/cfg/*'],
    );
    await fc.assert(
      fc.asyncProperty(sides, ruleSets, async ({ from, fates, extra, edit }, ignoreFields) => {
        const diffOptions = { ...options, ignoreFields };
        const to: Connection[] = [];
        from.forEach((c, i) => {
          if (fates[i] === 'same') to.push(structuredClone(c));
          else if (fates[i] === 'edit') to.push({ ...c, ...edit, name: c.name } as Connection);
        });
        const names = new Set(from.map((c) => c.name));
        for (const e of extra) if (!names.has(e.name)) to.push({ name: e.name, ...e.fields } as Connection);
        const fromPath = await writeSnapshotAt('from.jsonl', from);
        const toPath = await writeSnapshotAt('to.jsonl', to);

        const { found, steps, read } = await mergeDiff(fromPath, toPath, diffOptions);
        // Against the sides as read from their files: an edit made here by spreading shares its
        // values with the original, which compareConnections never walks (parsed sides share nothing).
        const parsed = (list: Connection[]) => JSON.parse(JSON.stringify(list)) as Connection[];
        expect(found.result).toEqual(diffConnections(parsed(from), parsed(to), diffOptions));
        expect(found.counts).toEqual({ from: from.length, to: to.length });
        for (const name of found.result.added)
          expect(found.typeOf(name)).toBe(from.find((c) => c.name === name)?.type);
        expect(read.from.verified.entryCount).toBe(from.length);
        expect(read.to.verified.entryCount).toBe(to.length);
        // A connection kept as is was written the same way: one step, parsed once. Only the pair
        // right after a name on one side only is met out of step (and compared field by field).
        const kept = fates.filter((f) => f === 'same').length;
        const outOfStep = fates.filter((f) => f === 'drop').length + extra.length;
        expect(steps.filter((s) => s === 'same').length).toBeGreaterThanOrEqual(kept - outOfStep);
      }),
      { numRuns: 100 },
    );
  });

  it('hands out byte-equal lines as one step, their masks found as diffConnections finds them', async () => {
    const entries = Array.from({ length: 40 }, (_, i) => ({
      name: `c${String(i).padStart(2, '0')}`,
      type: i % 2 === 0 ? 'rdb-mysql' : 's3',
      password: MASK,
      custom_fields: [{ field_name: 'k1', field_type: 'encrypted', field_value: MASK }],
      // JSON.stringify writes a control character as a `\u` escape (its count of masks is unknown).
      description: i === 7 ? 'bell \u0007' : 'plain',
    }));
    const a = await writeSnapshotAt('a.jsonl', entries);
    const b = await writeSnapshotAt('b.jsonl', entries);
    for (const ignoreFields of [[], ['/custom_fields/k1/field_type']]) {
      const differ = createMergedDiff({ ...options, ignoreFields });
      let same = 0;
      await mergeSnapshots(
        { path: a },
        { path: b },
        {
          same(entry, line) {
            same++;
            differ.same(entry, line);
          },
          both: () => expect.unreachable(),
          only: () => expect.unreachable(),
        },
      );
      expect(same).toBe(40);
      const diffed = differ.finish().result;
      expect(diffed.unchanged).toBe(40);
      expect(diffed.uncomparable).toEqual(
        diffConnections(entries, structuredClone(entries), { ...options, ignoreFields }).uncomparable,
      );
    }
  });

  it("refuses a damaged line that both files hold alike, with the reader's own message", async () => {
    const entries = [
      { name: 'a', type: 's3' },
      { name: 'b', type: 's3' },
      { name: 'c', type: 's3' },
    ];
    for (const [line, message] of [
      ['{"name":"b","type":"s3",}', /:3: not valid JSON/],
      ['{"name":"b"}', /:3: entry "b" has no string "type"/],
      // A control character unescaped in a string.
      ['{"name":"b","type":"s3","x":"\u0001"}', /:3: not valid JSON/],
      ['{"name":"a","type":"s3"}', /:3: duplicate name "a"/],
      ['{"name":"","type":"s3"}', /:3: entry has no string "name"/],
    ] as const) {
      const damaged = (label: string) =>
        writeSnapshotFile(join(dir, label), entries, { damage: (lines) => lines.splice(2, 1, line) });
      const from = await damaged('from.jsonl');
      const to = await damaged('to.jsonl');
      const error = await mergeDiff(from, to).catch((e: unknown) => e);
      expect(error, line).toBeInstanceOf(InputFileError);
      expect(String((error as Error).message), line).toMatch(message);
      expect(String((error as Error).message)).toMatch(/^from\.jsonl:/);
    }
  });

  it('hands out every line of two equal files as one step each', async () => {
    const entries = Array.from({ length: 50 }, (_, i) => ({
      name: `c${String(i).padStart(2, '0')}`,
      type: 'rdb-mysql',
      password: MASK,
    }));
    const a = await writeSnapshotAt('a.jsonl', entries);
    const b = await writeSnapshotAt('b.jsonl', entries);
    const { found, steps } = await mergeDiff(a, b);
    expect(steps).toEqual(entries.map(() => 'same'));
    expect(found.result.unchanged).toBe(50);
    expect([...found.result.uncomparable]).toEqual(entries.map((e) => ({ name: e.name, path: '/password' })));
  });

  it('pairs a version 1 side as any other (its entry lines are as in version 2)', async () => {
    const a: Connection = { name: 'a', type: 's3', description: 'x' };
    const b: Connection = { name: 'b', type: 's3', password: MASK };
    const c: Connection = { ...b, name: 'c' };
    const old = await writeSnapshotAt('old.jsonl', [a, b], 1);
    const now = await writeSnapshotAt('now.jsonl', [a, c]);
    const { found, steps } = await mergeDiff(old, now);
    expect(steps).toEqual(['same', 'from', 'to']);
    expect(found.result).toEqual(diffConnections([a, b], [a, c], options));
  });

  it('refuses a damaged side, naming it and the line, whichever side it is', async () => {
    const entries = [
      { name: 'a', type: 's3' },
      { name: 'b', type: 's3' },
      { name: 'c', type: 's3' },
    ];
    const good = await writeSnapshotAt('good.jsonl', entries);
    // Lines 3 and 4 swapped: "c" before "b".
    const unsorted = await writeSnapshotFile(join(dir, 'unsorted.jsonl'), entries, {
      damage: (lines) => lines.splice(2, 2, lines[3] as string, lines[2] as string),
    });
    const error = await mergeDiff(good, unsorted).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputFileError);
    expect(String((error as Error).message)).toMatch(/to\.jsonl:4: .*not sorted by name/);

    // The trailer cut off.
    const truncated = await writeSnapshotFile(join(dir, 'truncated.jsonl'), entries, {
      damage: (lines) => lines.splice(3),
    });
    const cut = await mergeDiff(truncated, good).catch((e: unknown) => e);
    expect(cut).toBeInstanceOf(InputFileError);
    expect(String((cut as Error).message)).toMatch(/from\.jsonl:4: no trailer/);
  });

  it('stops when the signal aborts', async () => {
    const entries = Array.from({ length: 200 }, (_, i) => ({
      name: `c${String(i).padStart(3, '0')}`,
      type: 's3',
    }));
    const a = await writeSnapshotAt('a.jsonl', entries);
    const controller = new AbortController();
    let seen = 0;
    const count = () => {
      if (++seen === 10) controller.abort();
    };
    const run = mergeSnapshots(
      { path: a },
      { path: a },
      { same: count, both: count, only: count },
      { signal: controller.signal, chunkSize: 256 },
    );
    await expect(run).rejects.toBeInstanceOf(InterruptedError);
  });
});
