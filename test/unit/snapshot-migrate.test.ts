import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { InputFileError } from '../../src/errors.js';
import { hashEntryLines } from '../../src/snapshot/checksum.js';
import {
  createMigrationRegistry,
  migrateV1ToV2,
  type SnapshotMigration,
} from '../../src/snapshot/migrate.js';
import { loadSnapshot, verifySnapshot } from '../../src/snapshot/read.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let dir: string;
beforeEach(async () => {
  dir = await makeTempDir('dds-migrate-');
});

/**
 * A made-up version 0, registered by the test only: its header had a flat `sourceUrl` and
 * `environment`, and its entries called the type `connType`.
 */
const v0ToV1: SnapshotMigration = {
  from: 0,
  migrateHeader(h) {
    const { sourceUrl, environment, ...rest } = h;
    return { ...rest, formatVersion: 1, source: { url: sourceUrl, environment }, selection: {} };
  },
  migrateEntry(e) {
    const { connType, ...rest } = e;
    return { ...rest, type: connType };
  },
};

async function writeV0(): Promise<string> {
  const header = {
    kind: 'dds-migrate/snapshot',
    formatVersion: 0,
    createdAt: '2025-01-01T00:00:00.000Z',
    tool: 'dds-migrate 0.0.1',
    sourceUrl: 'https://old.example.com',
    environment: 'old',
  };
  const entries = ['{"name":"a-conn","connType":"s3","enabled":"yes"}', '{"name":"b-conn","connType":"smb"}'];
  const trailer = { kind: 'dds-migrate/snapshot-end', entryCount: 2, sha256: hashEntryLines(entries) };
  const path = join(dir, 'v0.snapshot.jsonl');
  await writeFile(path, `${[JSON.stringify(header), ...entries, JSON.stringify(trailer)].join('\n')}\n`);
  return path;
}

describe('format migrations', () => {
  it('migrates a version 0 snapshot on read: header and every entry reach the current version', async () => {
    const path = await writeV0();
    const migrations = createMigrationRegistry([v0ToV1, migrateV1ToV2]);
    const verified = await verifySnapshot(path, { migrations });
    expect(verified.storedFormatVersion).toBe(0);
    expect(Object.fromEntries(verified.typeCounts)).toEqual({ s3: 1, smb: 1 });
    const loaded = await loadSnapshot(path, { migrations });
    expect(loaded.profiles).toEqual([]);
    expect(loaded.header).toEqual({
      kind: 'dds-migrate/snapshot',
      formatVersion: 2,
      createdAt: '2025-01-01T00:00:00.000Z',
      tool: 'dds-migrate 0.0.1',
      source: { url: 'https://old.example.com', environment: 'old' },
      selection: { ids: null, types: null, name: null },
      include: ['connections'],
    });
    expect(loaded.entries).toEqual([
      { name: 'a-conn', type: 's3', enabled: 'yes' },
      { name: 'b-conn', type: 'smb' },
    ]);
  });

  it('refuses an old version that no migration reaches (the shipped registry has none for 0)', async () => {
    const path = await writeV0();
    const error = await verifySnapshot(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputFileError);
    expect((error as InputFileError).line).toBe(1);
    expect((error as InputFileError).message).toMatch(/formatVersion 0 is no longer supported/);
  });

  it('chains steps in order and refuses a second step for the same version', () => {
    const step = (from: number): SnapshotMigration => ({
      from,
      migrateHeader: (h) => h,
      migrateEntry: (e) => e,
    });
    const registry = createMigrationRegistry([step(1), step(0)]);
    expect(registry.chain(0, 2)?.map((s) => s.from)).toEqual([0, 1]);
    expect(registry.chain(0, 3)).toBeUndefined();
    expect(registry.chain(1, 1)).toEqual([]);
    expect(() => registry.register(step(0))).toThrow(/already registered/);
  });
});
