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
import { type SnapshotSide, startSnapshotSide } from '../../src/diff-workflow/snapshot-side.js';
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

/**
 * Hand `entries` over as the export does: the bytes of their JSON array in chunks of `chunkSize` (an
 * element's bytes before the connection is parsed), then each connection read (as the export's thread
 * reads it, awaiting a wait). Returns the most connections that were read and not compared.
 */
async function handOver(
  side: SnapshotSide,
  entries: readonly Connection[],
  onRead: (wait: Promise<void> | undefined) => void | Promise<void> = () => undefined,
  chunkSize = 97,
): Promise<void> {
  const ends: number[] = [];
  const pieces = ['['];
  let length = 1;
  entries.forEach((entry, i) => {
    const piece = `${i === 0 ? '' : ',\n'}${JSON.stringify(entry)}`;
    pieces.push(piece);
    length += Buffer.byteLength(piece);
    ends.push(length);
  });
  const bytes = Buffer.from(`${pieces.join('')}]`);
  let read = 0;
  for (let at = 0; at < bytes.length; at += chunkSize) {
    side.addBytes(bytes.subarray(at, at + chunkSize));
    const fed = Math.min(bytes.length, at + chunkSize);
    while (read < entries.length && (ends[read] as number) <= fed) {
      read++;
      const wait = side.read();
      await onRead(wait);
      if (wait !== undefined) await wait;
    }
  }
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
    maxInFlightBytes?: number,
  ) =>
    startSnapshotSide(
      { path, label: 'side.jsonl', flag, ignoreFields, secretFields, holdForRereadsUpTo },
      threshold,
      maxInFlight,
      maxInFlightBytes,
    );

  it('equals diffConnections, whichever side the snapshot is', async () => {
    const { snapshot, environment } = sides(300);
    const path = await writeSideSnapshot(snapshot);
    for (const flag of ['from', 'to'] as const) {
      const side = startSide(path, flag, options.ignoreFields);
      try {
        await handOver(side, environment);
        const { found, profiles } = await side.finish([]);
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
        expect(found.typeOf(added)).toBe(
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
      const passes = [0, 1, 2].flatMap((pass) =>
        environment.map((entry) => ({ ...entry, name: `${entry.name}-${pass}` })),
      );
      await handOver(side, passes, async (wait) => {
        most = Math.max(most, side.inFlight());
        if (wait === undefined) return;
        waits += 1;
        if (indexed) waitsAfterIndexed += 1;
        await wait;
        expect(side.inFlight()).toBeLessThanOrEqual(cap / 2 + 1_000);
      });
      // Never more than the cap.
      expect(most).toBeLessThanOrEqual(cap);
      expect(waits).toBeGreaterThan(0);
      expect(waitsAfterIndexed).toBeGreaterThan(0);
      const { found } = await side.finish([]);
      expect(found.counts).toEqual({ from: 3 * environment.length, to: snapshot.length });
      expect(side.inFlight()).toBe(0);
    } finally {
      await side.close();
    }
  });

  it('holds the export back while more than its cap in bytes is handed over and not done with, whatever the count', async () => {
    const { snapshot, environment } = sides(600);
    const path = await writeSideSnapshot(snapshot);
    const capBytes = 40_000;
    // Connections of about 1 KB each: the byte cap is reached long before the count cap.
    const large = environment.map((entry) => ({ ...entry, notes: 'n'.repeat(1_000) }));
    const side = startSide(path, 'to', [], 1_000_000, undefined, capBytes);
    try {
      let waits = 0;
      let most = 0;
      await handOver(
        side,
        large,
        async (wait) => {
          most = Math.max(most, side.inFlightBytes());
          if (wait === undefined) return;
          waits += 1;
          await wait;
          // Caught up by half, or nearly: what the side has not told yet is under an eighth of the cap.
          expect(side.inFlightBytes()).toBeLessThanOrEqual(capBytes / 2 + 4_096);
        },
        4_096,
      );
      expect(waits).toBeGreaterThan(0);
      // The cap and the chunk that crossed it, at most.
      expect(most).toBeLessThanOrEqual(capBytes + 4_096);
      const { found } = await side.finish([]);
      expect(found.counts.from).toBe(large.length);
      expect(side.inFlightBytes()).toBe(0);
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
      await handOver(side, environment);
      await expect(side.finish([])).rejects.toBeInstanceOf(InputFileError);
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
      await handOver(side, environment);
      const { found } = await side.finish([]);
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
      await handOver(side, environment);
      const finished = await side.finish([]).catch((e: unknown) => e);
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
      await handOver(side, environment, () => undefined, 64 * 1024);
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
      const { found } = await side.finish([]);
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
    const finished = expect(side.finish([])).rejects.toBeInstanceOf(InterruptedError);
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
      await handOver(side, [
        { name: 'c0001', type: 's3' },
        { name: 'c0001', type: 's3', description: 'again' },
      ]);
      const error = await side.finish([]).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).message).toMatch(
        /--from side holds more than one connection named "c0001"/,
      );
    } finally {
      await side.close();
    }
  });

  it('parses an element with a space JSON.parse refuses and the export parser takes (a no-break space)', async () => {
    const { snapshot } = sides(10);
    const path = await writeSideSnapshot(snapshot);
    const side = startSide(path);
    try {
      side.addBytes(Buffer.from('[{"name":"c0001",\u00a0"type":"rdb-mysql","note":"\u00a0"}]'));
      side.read();
      const { found } = await side.finish([]);
      expect(found.counts.from).toBe(1);
      expect(found.result.changed.map((c) => c.name)).toEqual(['c0001']);
      expect(found.result.changed[0]?.fields.map((f) => f.path)).toContain('/note');
    } finally {
      await side.close();
    }
  });

  it('finds a mask the service wrote with escapes (\\u002a) in an element equal to its twin', async () => {
    const { snapshot } = sides(4);
    const path = await writeSideSnapshot(snapshot);
    const side = startSide(path);
    try {
      // c0001 as the snapshot holds it (rdb-mysql, password masked), its mask written escaped.
      const twin = JSON.stringify(snapshot[1]).replace('"******"', `"${'\\u002a'.repeat(6)}"`);
      expect(twin).toContain('\\u002a');
      side.addBytes(Buffer.from(`[${twin}]`));
      side.read();
      const { found } = await side.finish([]);
      expect(found.result.unchanged).toBe(1);
      expect(found.result.uncomparable).toEqual([{ name: 'c0001', path: '/password' }]);
    } finally {
      await side.close();
    }
  });

  it('names the ids asked for at the end that a connection of the environment has', async () => {
    const { snapshot, environment } = sides(30);
    const path = await writeSideSnapshot(snapshot);
    const side = startSide(path);
    try {
      const withIds = environment.map((entry, i) => ({ ...entry, _id: `id-${i}` }));
      await handOver(side, withIds);
      const { names } = await side.finish(['id-3', 'id-unknown', 'id-0']);
      expect([...names]).toEqual([
        ['id-3', withIds[3]?.name],
        ['id-0', withIds[0]?.name],
      ]);
    } finally {
      await side.close();
    }
  });

  it.each([
    ['an object', '{"name":"c0001"}'],
    ['an array holding a number', '[{"name":"c0001","type":"s3"},5]'],
    ['an element that does not parse', '[{"name":"c0001","type":"s3"},{"password":"hunter2-secret",}]'],
  ])(
    'stops holding the export back when the bytes are not an array of objects (%s), and fails at the end as a bug',
    async (_label, body) => {
      const { snapshot } = sides(10);
      const path = await writeSideSnapshot(snapshot);
      const side = startSide(path, 'to', [], 2);
      try {
        side.addBytes(Buffer.from(body));
        // Read as if the export's own parser took more than the cap: not held back once unfollowed.
        let waited = 0;
        for (let i = 0; i < 10; i++) {
          const wait = side.read();
          if (wait !== undefined) {
            waited++;
            await wait;
          }
        }
        expect(waited).toBeLessThanOrEqual(1);
        const error = await side.finish([]).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(Error);
        expect((error as Error).message).toMatch(/the diff could not follow its bytes/);
        // The element's values never reach the message (JSON.parse's own quotes them).
        expect((error as Error).message).not.toContain('hunter2');
      } finally {
        await side.close();
      }
    },
  );
});
