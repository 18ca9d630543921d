/**
 * The import's lean snapshot: per entry a place, the body prepared again from the file each time, and a
 * line that changed since it was verified refused.
 */

import { writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SourceIdChange } from '../../src/connections/references.js';
import { InputFileError } from '../../src/errors.js';
import { createPreparer, type LeanEntry, readLeanSnapshot } from '../../src/importer/lean-snapshot.js';
import { EMPTY_OVERRIDES } from '../../src/importer/overrides.js';
import type { Connection } from '../../src/model/connection.js';
import { loadShippedCatalog } from '../../src/schema/catalog.js';
import { createSnapshotHeader } from '../../src/snapshot/format.js';
import { indexSnapshot } from '../../src/snapshot/read.js';
import { writeSnapshot } from '../../src/snapshot/write.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const header = createSnapshotHeader({
  tool: 'dds-migrate test',
  source: { url: 'https://prod.example.com', environment: 'prod' },
});

const entries: Connection[] = [
  { _id: 'src-a', name: 'a-s3', type: 's3', bucket_name: 'bucket-a', scanner_group: 'default' },
  { _id: 'src-b', name: 'b-s3', type: 's3', bucket_name: 'bucket-b', scanner_group: 'default' },
];

describe('the lean snapshot of an import', () => {
  it('keeps name, type, source id and place; prepares the same body each time; refuses a line that changed', async () => {
    const dir = await makeTempDir('dds-lean-');
    const path = join(dir, 's.snapshot.jsonl');
    await writeSnapshot({ path }, header, entries);
    const seen: string[] = [];
    // Each reread from the file (nothing held in memory).
    const lean = await readLeanSnapshot(path, new AbortController().signal, (e) => seen.push(e.name), 0);
    try {
      expect(seen).toEqual(['a-s3', 'b-s3']);
      expect(lean.entries.map(({ name, type, sourceId }) => ({ name, type, sourceId }))).toEqual([
        { name: 'a-s3', type: 's3', sourceId: 'src-a' },
        { name: 'b-s3', type: 's3', sourceId: 'src-b' },
      ]);
      expect(Object.keys(lean.entries[0] ?? {}).sort()).toEqual(['name', 'place', 'sourceId', 'type']);
      const changes = new Map<string, readonly SourceIdChange[]>();
      const prepare = createPreparer(lean.file, EMPTY_OVERRIDES, await loadShippedCatalog(), changes);
      const first = prepare(lean.entries[1] as (typeof lean.entries)[number]);
      expect(first.body).toMatchObject({ name: 'b-s3', bucket_name: 'bucket-b' });
      expect(first.body).not.toHaveProperty('_id');
      expect(prepare(lean.entries[1] as (typeof lean.entries)[number])).toEqual(first);

      // The file changes under the run (same length, other bytes): the entry is refused, not sent.
      const text = await readFile(path, 'utf8');
      await writeFile(path, text.replace('bucket-b', 'bucket-x'));
      expect(() => prepare(lean.entries[1] as (typeof lean.entries)[number])).toThrow(InputFileError);
    } finally {
      lean.file.close();
    }
  });

  it('held in memory (a small snapshot): sends the lines it verified, whatever the file becomes after', async () => {
    const dir = await makeTempDir('dds-lean-held-');
    const path = join(dir, 's.snapshot.jsonl');
    await writeSnapshot({ path }, header, entries);
    const catalog = await loadShippedCatalog();
    const text = await readFile(path, 'utf8');
    const lean = await readLeanSnapshot(path, new AbortController().signal, () => undefined);
    try {
      const prepare = createPreparer(lean.file, EMPTY_OVERRIDES, catalog, new Map());
      // Changed before the first reread and again after it: the bytes held are the ones checked.
      await writeFile(path, text.replace('bucket-b', 'bucket-x'));
      expect(prepare(lean.entries[1] as LeanEntry).body).toMatchObject({ bucket_name: 'bucket-b' });
      await writeFile(path, text.replace('bucket-b', 'bucket-y'));
      expect(prepare(lean.entries[1] as LeanEntry).body).toMatchObject({ bucket_name: 'bucket-b' });
    } finally {
      lean.file.close();
    }
  });

  it('held in memory: a file that shrinks or grows while it is read is refused', async () => {
    const dir = await makeTempDir('dds-lean-held-');
    const path = join(dir, 's.snapshot.jsonl');
    await writeSnapshot({ path }, header, entries);
    const text = await readFile(path, 'utf8');
    for (const change of [text.slice(0, 40), `${text}${text}`]) {
      await writeFile(path, text);
      // Read 64 bytes at a time: the file changes after its first entry is read, before the rest is.
      let changed = false;
      const read = indexSnapshot(
        path,
        () => {
          if (!changed) writeFileSync(path, change);
          changed = true;
        },
        { chunkSize: 64, holdForRereadsUpTo: 1 << 20 },
      );
      await expect(read).rejects.toBeInstanceOf(InputFileError);
    }
  });
});
