/**
 * The snapshot side of a diff against an environment (src/diff-workflow/snapshot-side.ts), on this
 * thread (a MessageChannel) and in a worker thread (the build's worker: `npm test` builds first):
 * the same result as diffConnections, errors rebuilt as the same classes with the same text, and
 * connections handed over before the snapshot is read wait for it.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { diffConnections } from '../../src/diff/compare.js';
import { startSnapshotSide } from '../../src/diff-workflow/snapshot-side.js';
import { InputFileError, InterruptedError, UsageError } from '../../src/errors.js';
import type { Connection } from '../../src/model/connection.js';
import { MASK } from '../../src/secrets.js';
import { writeSnapshotFile } from '../helpers/snapshot-file.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let dir: string;
beforeEach(async () => {
  dir = await makeTempDir('dds-migrate-side-');
});

const secretFields = [['rdb-mysql', ['password']]] as const;
const options = {
  ignoreFields: ['/owners_v2/*/origin'],
  secretFields: (type: string) => new Set(type === 'rdb-mysql' ? ['password'] : []),
};

function writeSideSnapshot(entries: readonly Connection[], damage?: (lines: string[]) => void) {
  return writeSnapshotFile(join(dir, 'side.snapshot.jsonl'), entries, damage === undefined ? {} : { damage });
}

function sides(n: number) {
  const snapshot: Connection[] = [];
  const environment: Connection[] = [];
  for (let i = 0; i < n; i++) {
    const name = `c${String(i).padStart(4, '0')}`;
    const type = i % 2 ? 'rdb-mysql' : 's3';
    snapshot.push({ name, type, password: MASK, description: 'd', owners_v2: [{ email: 'x', origin: 'o' }] });
    if (i % 7 !== 0)
      environment.push({
        name,
        type,
        password: i % 5 ? MASK : 'clear',
        description: i % 3 ? 'd' : 'changed',
        owners_v2: [{ email: 'x', origin: 'other' }],
      });
  }
  environment.push({ name: 'only-env', type: 's3' });
  // The export's order is not the snapshot's.
  return { snapshot, environment: environment.reverse() };
}

describe.each([
  ['on this thread', Number.POSITIVE_INFINITY],
  ['in a worker thread', 0],
])('startSnapshotSide %s', (_label, threshold) => {
  /** The side of the snapshot at `path` (named `side.jsonl` in messages), on this test's thread or not. */
  const startSide = (
    path: string,
    flag: 'from' | 'to' = 'to',
    ignoreFields: readonly string[] = [],
    maxInFlight?: number,
    holdForRereadsUpTo?: number,
  ) =>
    startSnapshotSide(
      { path, label: 'side.jsonl', flag, ignoreFields, secretFields, holdForRereadsUpTo },
      threshold,
      maxInFlight,
    );

  it('equals diffConnections, whichever side the snapshot is', async () => {
    const { snapshot, environment } = sides(300);
    const path = await writeSideSnapshot(snapshot);
    for (const flag of ['from', 'to'] as const) {
      const side = startSide(path, flag, options.ignoreFields);
      try {
        for (const entry of environment) await side.add(entry);
        const { found, profiles } = await side.finish();
        const expected =
          flag === 'from'
            ? diffConnections(snapshot, environment, options)
            : diffConnections(environment, snapshot, options);
        expect(found.result).toEqual(expected);
        expect(found.result.changed.length).toBeGreaterThan(0);
        expect(found.result.uncomparable.length).toBeGreaterThan(0);
        const fromCount = flag === 'from' ? snapshot.length : environment.length;
        expect(found.counts.from).toBe(fromCount);
        const added = found.result.added[0] as string;
        expect(found.typeOfAdded(added)).toBe(
          (flag === 'from' ? snapshot : environment).find((c) => c.name === added)?.type,
        );
        expect(profiles).toEqual([]);
      } finally {
        await side.close();
      }
    }
  });

  it('holds the export back while more than its cap is handed over and not compared, before and after indexing', async () => {
    const { snapshot, environment } = sides(2000);
    const path = await writeSideSnapshot(snapshot);
    const cap = 200;
    const side = startSide(path, 'to', [], cap);
    try {
      let waits = 0;
      let waitsAfterIndexed = 0;
      let indexed = false;
      void side.indexed.then(() => {
        indexed = true;
      });
      let most = 0;
      // Three passes of the environment (the same names again would be a duplicate: renamed).
      for (let pass = 0; pass < 3; pass++) {
        for (const entry of environment) {
          const wait = side.add({ ...entry, name: `${entry.name}-${pass}` });
          most = Math.max(most, side.inFlight());
          if (wait === undefined) continue;
          waits += 1;
          if (indexed) waitsAfterIndexed += 1;
          await wait;
          expect(side.inFlight()).toBeLessThanOrEqual(cap / 2 + 50);
        }
      }
      // Never more than the cap and the batch that reached it.
      expect(most).toBeLessThanOrEqual(cap + 50);
      expect(waits).toBeGreaterThan(0);
      expect(waitsAfterIndexed).toBeGreaterThan(0);
      const { found } = await side.finish();
      expect(found.counts).toEqual({ from: 3 * environment.length, to: snapshot.length });
      expect(side.inFlight()).toBe(0);
    } finally {
      await side.close();
    }
  });

  it('rebuilds a damaged snapshot as the InputFileError the reader raised (file, line, hint)', async () => {
    const { snapshot, environment } = sides(20);
    const path = await writeSideSnapshot(snapshot, (lines) => {
      lines[3] = (lines[3] as string).replace('"', "'");
    });
    const side = startSide(path);
    try {
      const indexed = await side.indexed.catch((e: unknown) => e);
      expect(indexed).toBeInstanceOf(InputFileError);
      expect((indexed as InputFileError).message).toMatch(/^side\.jsonl:4: not valid JSON/);
      expect((indexed as InputFileError).line).toBe(4);
      expect((indexed as InputFileError).hint).toBe('The snapshot is damaged: export it again');
      for (const entry of environment) await side.add(entry);
      await expect(side.finish()).rejects.toBeInstanceOf(InputFileError);
    } finally {
      await side.close();
    }
  });

  it('compares with the lines it checked when the file is held, whatever the file becomes after', async () => {
    const { snapshot, environment } = sides(40);
    const path = await writeSideSnapshot(snapshot);
    const side = startSide(path, 'to', options.ignoreFields);
    try {
      await side.indexed;
      // Rewritten in place after its first pass: the bytes held are the ones checked.
      await writeSideSnapshot(snapshot.map((c) => ({ ...c, description: 'rewritten' })));
      for (const entry of environment) await side.add(entry);
      const { found } = await side.finish();
      expect(found.result).toEqual(diffConnections(environment, snapshot, options));
      expect(found.result.changed.length).toBeGreaterThan(0);
    } finally {
      await side.close();
    }
  });

  it('fails after it was indexed when a line changed on a reread (failed, failure(), finish)', async () => {
    const { snapshot, environment } = sides(40);
    const path = await writeSideSnapshot(snapshot);
    // Not held (as a snapshot over the hold's size): each reread reads its line from the file.
    const side = startSide(path, 'to', [], undefined, 0);
    try {
      await side.indexed;
      // Rewritten in place after its first pass: the rereads no longer find the lines it checked.
      await writeSideSnapshot(snapshot.map((c) => ({ ...c, description: 'rewritten' })));
      for (const entry of environment) await side.add(entry);
      const finished = await side.finish().catch((e: unknown) => e);
      expect(finished).toBeInstanceOf(InputFileError);
      expect((finished as Error).message).toMatch(
        /^side\.jsonl:\d+: the snapshot changed while it was being read/,
      );
      await expect(side.failed).rejects.toBe(side.failure());
    } finally {
      await side.close();
    }
  });

  it('compares what arrives during its first pass once the pass has passed the twin, and equals diffConnections', async () => {
    // Over 1 MiB: the pass turns the event loop (and takes messages) before it ends.
    const { snapshot, environment } = sides(20_000);
    const path = await writeSideSnapshot(snapshot);
    expect(statSync(path).size).toBeGreaterThan(1024 * 1024);
    const side = startSide(path, 'to', options.ignoreFields, 100_000);
    try {
      for (const entry of environment) await side.add(entry);
      const sent = environment.length;
      let inFlightWhenIndexed = -1;
      await side.indexed.then(() => {
        inFlightWhenIndexed = side.inFlight();
      });
      // On this thread the pass takes its first messages after its first mebibyte: the names it has
      // passed by then are compared before it ends (in a worker, when depends on the threads).
      if (threshold === Number.POSITIVE_INFINITY) {
        expect(inFlightWhenIndexed).toBeGreaterThan(0);
        expect(inFlightWhenIndexed).toBeLessThan(sent);
      }
      const { found } = await side.finish();
      expect(found.result).toEqual(diffConnections(environment, snapshot, options));
      expect(found.counts).toEqual({ from: environment.length, to: snapshot.length });
    } finally {
      await side.close();
    }
  });

  it('close() stops it: what waits on it is rejected as interrupted', async () => {
    const { snapshot } = sides(40);
    const path = await writeSideSnapshot(snapshot);
    const side = startSide(path);
    const finished = expect(side.finish()).rejects.toBeInstanceOf(InterruptedError);
    await side.close();
    await finished;
    await expect(side.indexed).rejects.toBeInstanceOf(InterruptedError);
    await expect(side.failed).rejects.toBeInstanceOf(InterruptedError);
  });

  it('refuses an environment holding a name twice (UsageError, as the whole-sides diff)', async () => {
    const { snapshot } = sides(10);
    const path = await writeSideSnapshot(snapshot);
    const side = startSide(path);
    try {
      await side.add({ name: 'c0001', type: 's3' });
      await side.add({ name: 'c0001', type: 's3', description: 'again' });
      const error = await side.finish().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).message).toMatch(
        /--from side holds more than one connection named "c0001"/,
      );
    } finally {
      await side.close();
    }
  });
});
