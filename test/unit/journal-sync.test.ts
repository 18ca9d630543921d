/**
 * When the journal's writer syncs (src/sync/journal/writer.ts, docs/why.md "Why the journal is written
 * synchronously"): an intent is on disk before its append resolves, a batch of outcomes alone is written
 * and not synced, the next synced record (an intent, a run's `run-end`) or the close takes them to disk,
 * and a write that fails rejects every record of its batch with one typed error.
 */
import * as fs from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { FileWriteError } from '../../src/errors.js';
import type { JournalRecord } from '../../src/sync/journal/records.js';
import { replayJournal, writesOf } from '../../src/sync/journal/replay.js';
import { openJournal } from '../../src/sync/journal/writer.js';
import { createdRecords } from '../helpers/journal-records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  return { ...actual, fdatasyncSync: vi.fn(actual.fdatasyncSync), writeSync: vi.fn(actual.writeSync) };
});

const syncs = vi.mocked(fs.fdatasyncSync);
const writes = vi.mocked(fs.writeSync);
const binding = { snapshotSha256: 'a'.repeat(64), targetUrl: 'http://127.0.0.1:9000' };
const at = '2026-11-27T00:00:00.000Z';

const intent = (name: string) => createdRecords('connection', name, at)[0] as JournalRecord;
const outcome = (name: string) => createdRecords('connection', name, at)[1] as JournalRecord;

describe('journal writes and syncs', () => {
  let path: string;
  beforeEach(async () => {
    path = join(await makeTempDir('journal-sync-'), 'j.jsonl');
  });

  it('syncs an intent before it resolves, writes outcomes alone without a sync, and syncs them later', async () => {
    const journal = await openJournal(path, binding, { tool: 't' });
    await journal.startRun(1, 'import');
    syncs.mockClear();
    writes.mockClear();

    // Appended together: one write, one sync.
    await Promise.all([journal.append(intent('a')), journal.append(intent('b'))]);
    expect(writes).toHaveBeenCalledTimes(1);
    expect(syncs).toHaveBeenCalledTimes(1);

    await Promise.all([journal.append(outcome('a')), journal.append(outcome('b'))]);
    expect(writes).toHaveBeenCalledTimes(2);
    expect(syncs).toHaveBeenCalledTimes(1);
    // Written at once: a process killed now loses neither.
    expect(await readFile(path, 'utf8')).toContain('"targetId":"id-b"');

    await journal.endRun(1);
    expect(syncs).toHaveBeenCalledTimes(2);
    await journal.close();
    expect(syncs).toHaveBeenCalledTimes(3);
  });

  it('rejects every record of a batch whose write fails, with one typed error', async () => {
    const journal = await openJournal(path, binding, { tool: 't' });
    writes.mockImplementationOnce(() => {
      throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    });
    const results = await Promise.allSettled([journal.append(intent('a')), journal.append(outcome('a'))]);
    for (const result of results) {
      expect(result.status).toBe('rejected');
      const reason = (result as PromiseRejectedResult).reason as FileWriteError;
      expect(reason).toBeInstanceOf(FileWriteError);
      expect(reason.message).toContain('cannot write the journal (ENOSPC)');
    }
    await journal.close();
  });

  it('a write cut short by a full disk leaves no part of a line: the next record reads back whole', async () => {
    const journal = await openJournal(path, binding, { tool: 't' });
    await journal.append(intent('a'));
    // Ten bytes of the batch reach the disk, then it is full.
    const actual = await vi.importActual<typeof import('node:fs')>('node:fs');
    writes.mockImplementationOnce((fd, buffer) => actual.writeSync(fd, buffer as unknown as Buffer, 0, 10));
    writes.mockImplementationOnce(() => {
      throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    });
    await expect(journal.append(outcome('a'))).rejects.toBeInstanceOf(FileWriteError);
    // Room again: the next record starts a line of its own.
    await journal.append(intent('b'));
    await journal.close();
    const replay = replayJournal(await readFile(path, 'utf8'));
    expect(replay.tornTail).toBe(false);
    expect([...writesOf(replay.runs.at(-1), 'connection').keys()]).toEqual(['a', 'b']);
  });
});
