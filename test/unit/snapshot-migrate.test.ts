import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { InputFileError } from '../../src/errors.js';
import { hashEntryLines } from '../../src/snapshot/checksum.js';
import { loadSnapshot, verifySnapshot } from '../../src/snapshot/read.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let dir: string;
beforeEach(async () => {
  dir = await makeTempDir('dds-migrate-');
});

async function writeVersion(formatVersion: number): Promise<string> {
  const header = {
    kind: 'dds-migrate/snapshot',
    formatVersion,
    createdAt: '2025-01-01T00:00:00.000Z',
    tool: 'dds-migrate 0.0.1',
    source: { url: 'https://old.example.com', environment: 'old' },
    selection: {},
  };
  const entries = ['{"name":"a-conn","type":"s3","enabled":"yes"}', '{"name":"b-conn","type":"smb"}'];
  const trailer = { kind: 'dds-migrate/snapshot-end', entryCount: 2, sha256: hashEntryLines(entries) };
  const path = join(dir, `v${formatVersion}.snapshot.jsonl`);
  await writeFile(path, `${[JSON.stringify(header), ...entries, JSON.stringify(trailer)].join('\n')}\n`);
  return path;
}

describe('format migrations', () => {
  it('migrates a version 1 snapshot on read: its header reaches the current version, entries as stored', async () => {
    const path = await writeVersion(1);
    const verified = await verifySnapshot(path);
    expect(verified.storedFormatVersion).toBe(1);
    expect(Object.fromEntries(verified.typeCounts)).toEqual({ s3: 1, smb: 1 });
    const loaded = await loadSnapshot(path);
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

  it('refuses a version older than 1', async () => {
    const path = await writeVersion(0);
    const error = await verifySnapshot(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputFileError);
    expect((error as InputFileError).line).toBe(1);
    expect((error as InputFileError).message).toMatch(/formatVersion 0 is no longer supported/);
  });
});
