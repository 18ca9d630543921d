/**
 * `diff` of two snapshot files gives V8 its own heap growth back (src/cli/heap.ts, ownHeapGrowth): a
 * merge of two snapshots holds little, and the cap only costs full collections. A side read from an
 * environment keeps the cap. The flag itself is V8's; what is tested is when the command asks for it.
 */
import { join } from 'node:path';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { Connection } from '../../src/model/connection.js';
import { findClosedPort } from '../helpers/closed-port.js';
import { runCli } from '../helpers/run-cli.js';
import { writeSnapshotFile } from '../helpers/snapshot-file.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const heap = vi.hoisted(() => ({ own: 0 }));
vi.mock('../../src/cli/heap.js', async (importOriginal) => {
  const original = await importOriginal<typeof import('../../src/cli/heap.js')>();
  return {
    ...original,
    ownHeapGrowth: () => {
      heap.own += 1;
    },
  };
});

let dir: string;
beforeEach(async () => {
  dir = await makeTempDir('dds-diff-heap-');
  heap.own = 0;
});

const entries: Connection[] = [{ name: 'a', type: 's3', bucket_name: 'b' } as Connection];

describe('diff and the heap growth', () => {
  it('two snapshot files: V8 grows the heap as it likes', async () => {
    const from = await writeSnapshotFile(join(dir, 'from.snapshot.jsonl'), entries);
    const to = await writeSnapshotFile(join(dir, 'to.snapshot.jsonl'), entries);
    const run = await runCli(['diff', '--from', from, '--to', to, '--json'], { cwd: dir });
    expect(run.exitCode).toBe(0);
    expect(heap.own).toBe(1);
  });

  it('a snapshot against an environment: the cap stays', async () => {
    const from = await writeSnapshotFile(join(dir, 'from.snapshot.jsonl'), entries);
    const port = await findClosedPort();
    const run = await runCli(['diff', '--from', from, '--to', `http://127.0.0.1:${port}`, '--json'], {
      cwd: dir,
      env: { DDS_TOKEN: 'token' },
    });
    expect(run.exitCode).not.toBe(0);
    expect(heap.own).toBe(0);
  });
});
