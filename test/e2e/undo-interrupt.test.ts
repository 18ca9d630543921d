/**
 * Ctrl-C (SIGINT) during an undo, as a child process: the deletes already sent settle before the exit
 * (130), and each one the service applied is in the journal as done, not left in doubt.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { replayJournal, writesOf } from '../../src/sync/journal/replay.js';
import { assertBuiltCliFresh } from '../helpers/built-cli.js';
import { killRunningChildren, startCliChild, waitUntil } from '../helpers/cli-child.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { targetReferences, writeGeneratedSnapshot } from './import.helpers.js';

describe('undo interrupted (child process)', () => {
  let dir: string;
  let snapshot: string;
  let emu: RunningEmulator | undefined;

  beforeAll(async () => {
    assertBuiltCliFresh();
    dir = await makeTempDir('undo-interrupt-');
    snapshot = join(dir, 'gen.snapshot.jsonl');
    await writeGeneratedSnapshot(snapshot, 6, 21);
  });
  afterEach(async () => {
    try {
      await killRunningChildren();
    } finally {
      await emu?.close();
      emu = undefined;
    }
  });

  /**
   * A target whose DELETEs are applied at once and answered 1.5 s later, the snapshot imported into it,
   * and an undo of that import started: resolves once the service has applied every delete.
   */
  async function undoWithDeletesOut(journalName: string) {
    const target = await startEmulator({
      data: { connections: [], ...targetReferences() },
      faults: 'latency=1500@DELETE:*',
    });
    emu = target;
    const journal = join(dir, journalName);
    const env = { DDS_TARGET_TOKEN: target.token };
    const imported = startCliChild(['import', snapshot, '--to', target.url, '--journal', journal], env);
    expect((await imported.exit).code).toBe(0);
    expect(target.store.connections).toHaveLength(6);
    const undo = startCliChild(['undo', journal], env);
    await waitUntil(undo, () => target.store.connections.length === 0);
    return { target, journal, env, undo };
  }

  /** The undo run's connection writes, as the journal has them. */
  async function undoRunOf(journal: string) {
    const runs = replayJournal(await readFile(journal, 'utf8')).runs;
    expect(runs.map((r) => r.command)).toEqual(['import', 'undo']);
    return runs.at(-1);
  }

  it('SIGINT while deletes are out: exit 130 once they are answered, each journaled done', async () => {
    const { journal, undo } = await undoWithDeletesOut('undo.journal.jsonl');
    undo.process.kill('SIGINT');
    expect((await undo.exit).code).toBe(130);
    const states = [...writesOf(await undoRunOf(journal), 'connection').values()].map((w) => w.state);
    expect(states).toEqual(Array(6).fill('done'));
  }, 60_000);

  it('SIGKILL while deletes are out: the undo run again finds them gone and journals each deleted', async () => {
    const { target, journal, env, undo } = await undoWithDeletesOut('killed.journal.jsonl');
    undo.process.kill('SIGKILL');
    await undo.exit;
    target.setFaults('');
    const again = startCliChild(['undo', journal], env);
    expect((await again.exit).code).toBe(0);
    const undoRun = await undoRunOf(journal);
    const states = [...writesOf(undoRun, 'connection').values()].map((w) => w.state);
    expect(states).toEqual(Array(6).fill('done'));
    expect(undoRun?.counts.connection?.deleted).toBe(6);
  }, 60_000);
});
