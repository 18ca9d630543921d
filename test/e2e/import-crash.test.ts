/**
 * Reliability: the import runs as a child process (the built CLI, `npm test` builds first) and is
 * killed at random moments under commit-then-drop faults; re-running must finish the job with no
 * connection created twice and none missing. Also Ctrl-C (SIGINT): exit 130, a consistent journal, and
 * a re-run that completes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateConnections, type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { createPrng } from '../../src/emulator/prng.js';
import { replayJournal } from '../../src/importer/journal.js';
import type { Connection } from '../../src/model/connection.js';
import { assertBuiltCliFresh, BUILT_CLI } from '../helpers/built-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { targetReferences, writeSnapshot } from './import.helpers.js';

interface Child {
  readonly process: ChildProcess;
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
}

/** Children still running: afterEach kills them, so a failed assertion leaves no import behind. */
const running = new Set<Child>();

function startImport(args: readonly string[], token: string): Child {
  const child = spawn(process.execPath, [BUILT_CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', DDS_TARGET_TOKEN: token },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  const started: Child = { process: child, exit, output: () => out };
  running.add(started);
  void exit.then(() => running.delete(started));
  return started;
}

/** SIGKILL every child still running and wait for each to be gone. */
async function killRunning(): Promise<void> {
  const children = [...running];
  for (const child of children) child.process.kill('SIGKILL');
  await Promise.all(children.map((child) => child.exit));
}

/** Resolve once the emulator has applied `count` creates, or the child has exited. */
async function waitForCreates(emu: RunningEmulator, count: number, child: Child): Promise<void> {
  let exited = false;
  void child.exit.then(() => {
    exited = true;
  });
  while (!exited && emu.record.creates.length < count) await new Promise((r) => setTimeout(r, 5));
}

describe('import survives crashes and interrupts (child process)', () => {
  let dir: string;
  let snapshot: string;
  let entries: Connection[];
  let emu: RunningEmulator | undefined;

  beforeAll(async () => {
    assertBuiltCliFresh();
    dir = await makeTempDir('import-crash-');
    snapshot = join(dir, 'gen.snapshot.jsonl');
    entries = generateConnections(120, { seed: 11 }).map(
      (c) => ({ ...c, _id: undefined }) as unknown as Connection,
    );
    entries = entries
      .map(({ _id, ...rest }) => rest as Connection)
      .sort((a, b) => (a.name < b.name ? -1 : 1));
    await writeSnapshot(snapshot, entries, 'https://prod.example.com');
  });
  afterEach(async () => {
    try {
      await killRunning();
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
    const done = [...replay.entries.values()].filter((s) => s.state === 'done').length;
    expect(done).toBe(emu.store.connections.length);
    expect(done).toBeLessThan(entries.length);
    expect(existsSync(`${journal}.lock`)).toBe(false);

    const again = startImport(args, emu.token);
    expect((await again.exit).code).toBe(0);
    for (const e of entries) expect(emu.record.createCount(e.name)).toBe(1);
  }, 60_000);
});
