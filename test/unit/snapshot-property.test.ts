import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { InputFileError } from '../../src/errors.js';
import type { Connection } from '../../src/model/connection.js';
import { createSnapshotHeader } from '../../src/snapshot/format.js';
import { loadSnapshot } from '../../src/snapshot/read.js';
import { writeSnapshot } from '../../src/snapshot/write.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let dir: string;
let original: Buffer;
let originalEntries: Connection[];
let headerLength: number;

beforeAll(async () => {
  dir = await makeTempDir('dds-prop-');
  const entries: Connection[] = [];
  for (let i = 0; i < 12; i++) {
    entries.push({
      _id: `65a1${i.toString(16).padStart(20, '0')}`,
      name: `conn-${i}`,
      type: i % 2 ? 's3' : 'rdb-mysql',
      enabled: i % 3 ? 'yes' : true,
      security_tier: i % 5,
      password: '******',
      tags: [{ tagName: 'dept', tagValue: `d${i}` }],
    });
  }
  const path = join(dir, 'base.snapshot.jsonl');
  const header = createSnapshotHeader({
    tool: 'dds-migrate 0.1.0',
    source: { url: 'https://prod.example.com', environment: 'prod' },
    createdAt: new Date('2026-11-22T10:00:00.000Z'),
  });
  await writeSnapshot({ path }, header, entries);
  original = await readFile(path);
  originalEntries = (await loadSnapshot(path)).entries;
  headerLength = original.indexOf(0x0a) + 1;
});

let counter = 0;
/** Read `bytes` as a snapshot: 'refused' (InputFileError) or the entries it yields. */
async function readBack(bytes: Buffer): Promise<'refused' | Connection[]> {
  counter += 1;
  const path = join(dir, `case-${counter}.snapshot.jsonl`);
  await writeFile(path, bytes);
  try {
    return (await loadSnapshot(path)).entries;
  } catch (error) {
    if (error instanceof InputFileError) return 'refused';
    throw error;
  } finally {
    await rm(path, { force: true });
  }
}

describe('a damaged snapshot is refused, never misread', () => {
  it('any truncation is refused', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: original.length - 1 }), async (cut) => {
        expect(await readBack(original.subarray(0, cut))).toBe('refused');
      }),
      { numRuns: 200 },
    );
  });

  it('any byte flip in the entries or the trailer is refused', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: headerLength, max: original.length - 1 }),
        fc.integer({ min: 1, max: 255 }),
        async (at, xor) => {
          const damaged = Buffer.from(original);
          damaged[at] = (damaged[at] as number) ^ xor;
          expect(await readBack(damaged)).toBe('refused');
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a byte flip in the header (not covered by the checksum) is refused or leaves the entries intact', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: headerLength - 1 }),
        fc.integer({ min: 1, max: 255 }),
        async (at, xor) => {
          const damaged = Buffer.from(original);
          damaged[at] = (damaged[at] as number) ^ xor;
          const result = await readBack(damaged);
          if (result !== 'refused') expect(result).toEqual(originalEntries);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('the checksum of lines read in chunks', () => {
  it('reads the snapshot back whole at any chunk size (lines within a chunk and lines across chunks)', async () => {
    const path = join(dir, 'chunks.snapshot.jsonl');
    await writeFile(path, original);
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: original.length + 10 }), async (chunkSize) => {
        expect((await loadSnapshot(path, { chunkSize })).entries).toEqual(originalEntries);
      }),
      { numRuns: 100 },
    );
  });
});
