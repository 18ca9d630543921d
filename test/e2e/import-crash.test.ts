/**
 * Reliability: the import runs as a child process (the built CLI, `npm test` builds first) and is
 * killed at random moments under commit-then-drop faults; re-running must finish the job with no
 * connection created twice and none missing. Also Ctrl-C (SIGINT): exit 130, a consistent journal, and
 * a re-run that completes.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { createPrng } from '../../src/emulator/prng.js';
import type { Connection } from '../../src/model/connection.js';
import { replayJournal, writesOf } from '../../src/sync/journal/replay.js';
import { assertBuiltCliFresh } from '../helpers/built-cli.js';
import { type CliChild, killRunningChildren, startCliChild, waitUntil } from '../helpers/cli-child.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { targetReferences, writeGeneratedSnapshot } from './import.helpers.js';

/** Resolve once the emulator has applied `count` creates, or the child has exited. */
function waitForCreates(emu: RunningEmulator, count: number, child: CliChild): Promise<void> {
  return waitUntil(child, () => emu.record.creates.length >= count);
}

const startImport = (args: readonly string[], token: string) =>
  startCliChild(args, { DDS_TARGET_TOKEN: token });

describe('import survives crashes and interrupts (child process)', () => {
  let dir: string;
  let snapshot: string;
  let entries: Connection[];
  let emu: RunningEmulator | undefined;

  beforeAll(async () => {
    assertBuiltCliFresh();
    dir = await makeTempDir('import-crash-');
    snapshot = join(dir, 'gen.snapshot.jsonl');
    entries = await writeGeneratedSnapshot(snapshot, 120, 11);
  });
  afterEach(async () => {
    try {
      await killRunningChildren();
    } finally {
      await emu?.close();
      emu = undefined;
    }
  });

  it('five SIGKILLs under 5% commit-then-drop, then completion: no duplicate, none missing', async () => {
    emu = await startEmulator({
      data: { connections: [], ...targetReferences() },
      latencyMs: 15,
      faults: 'commit-then-drop:0.05@POST:/ds_connections',
      seed: 3,
    });
    const random = createPrng(2024);
    const journal = join(dir, 'kill.journal.jsonl');
    const args = [
      'import',
      snapshot,
      '--to',
      emu.url,
      '--journal',
      journal,
      '--concurrency',
      '6',
      '--no-progress',
    ];
    let killedMidRun = 0;
    for (let i = 0; i < 5; i++) {
      const child = startImport(args, emu.token);
      // Kill after a random number of further creates (1..20) have been applied.
      await waitForCreates(emu, emu.record.creates.length + 1 + Math.floor(random() * 20), child);
      if (child.process.exitCode === null) {
        child.process.kill('SIGKILL');
        killedMidRun += 1;
      }
      const { signal } = await child.exit;
      if (signal === 'SIGKILL') {
        // Whatever was torn, the journal still replays.
        replayJournal(await readFile(journal, 'utf8').catch(() => ''));
      }
    }
    expect(killedMidRun).toBeGreaterThanOrEqual(3);
    const last = startImport(args, emu.token);
    const { code } = await last.exit;
    expect(last.output()).not.toMatch(/this is a bug/);
    expect(code).toBe(0);
    for (const e of entries) expect(emu.record.createCount(e.name), e.name).toBe(1);
    expect(emu.store.connections).toHaveLength(entries.length);
    expect(emu.record.requests.some((r) => r.fault === 'commit-then-drop')).toBe(true);
  }, 120_000);

  it('SIGINT: exit 130 with the journal consistent, and a re-run completes', async () => {
    emu = await startEmulator({ data: { connections: [], ...targetReferences() }, latencyMs: 60, seed: 5 });
    const journal = join(dir, 'int.journal.jsonl');
    const args = [
      'import',
      snapshot,
      '--to',
      emu.url,
      '--journal',
      journal,
      '--concurrency',
      '4',
      '--no-progress',
    ];
    const child = startImport(args, emu.token);
    await waitForCreates(emu, 10, child);
    child.process.kill('SIGINT');
    const { code } = await child.exit;
    expect(code).toBe(130);
    expect(child.output()).toMatch(/re-run/i);
    const replay = replayJournal(await readFile(journal, 'utf8'));
    expect(replay.tornTail).toBe(false);
    // Every create the service applied is in the journal as done: nothing was left in doubt.
    const done = [...writesOf(replay.runs.at(-1), 'connection').values()].filter(
      (s) => s.state === 'done',
    ).length;
    expect(done).toBe(emu.store.connections.length);
    expect(done).toBeLessThan(entries.length);
    expect(existsSync(`${journal}.lock`)).toBe(false);
    // The intents written ahead of requests that never left are withdrawn, not left in doubt.
    const text = await readFile(journal, 'utf8');
    expect(text).toContain('"kind":"withdrawn"');
    const states = [...writesOf(replay.runs.at(-1), 'connection').values()].map((s) => s.state);
    expect(states).not.toContain('in-doubt');

    const before = emu.record.requests.length;
    const again = startImport(args, emu.token);
    expect((await again.exit).code).toBe(0);
    for (const e of entries) expect(emu.record.createCount(e.name)).toBe(1);
    // Nothing in doubt, so no name is looked up before it is sent.
    const byName = emu.record.requests
      .slice(before)
      .filter((r) => r.method === 'GET' && /\/ds_connections\/[^?]/.test(r.path));
    expect(byName).toEqual([]);
  }, 60_000);
});
