/**
 * Converge and undo under SIGKILL: `import --on-conflict update --prune` runs as a child process (the
 * built CLI) against a non-empty target with commit-then-drop faults on every write route and is killed
 * at random moments; re-running finishes the job with the target equal to the snapshot, no create and
 * no delete applied twice. Then `undo`, killed too and re-run, restores the target as it was.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isServerManagedField } from '../../src/connections/server-managed.js';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { createPrng } from '../../src/emulator/prng.js';
import type { Connection } from '../../src/model/connection.js';
import { replayJournal } from '../../src/sync/journal/replay.js';
import { assertBuiltCliFresh } from '../helpers/built-cli.js';
import { type CliChild, killRunningChildren, startCliChild, waitUntil } from '../helpers/cli-child.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { buildSecretOverrides, writeGeneratedSnapshot, writeSnapshotFromEmulator } from './import.helpers.js';

type Row = Record<string, unknown>;

const startCli = (args: readonly string[], token: string, env: Record<string, string> = {}) =>
  startCliChild(args, { DDS_TARGET_TOKEN: token, ...env });

/** Resolve once the emulator has applied `count` changes, or the child has exited. */
function waitForChanges(emu: RunningEmulator, count: number, child: CliChild): Promise<void> {
  return waitUntil(child, () => emu.record.changes.length >= count);
}

function comparable(c: Row): Row {
  return Object.fromEntries(Object.entries(c).filter(([k]) => !isServerManagedField(k)));
}

function stateOf(emu: RunningEmulator): Map<string, Row> {
  return new Map(emu.store.connections.map((c) => [c.name, comparable(c as unknown as Row)]));
}

/** Run `args` up to `kills` times, SIGKILLing each after a random number of further changes; then to the end. */
async function runWithKills(
  emu: RunningEmulator,
  args: readonly string[],
  journal: string,
  kills: number,
  random: () => number,
  env: Record<string, string> = {},
): Promise<number> {
  let killedMidRun = 0;
  for (let i = 0; i < kills; i++) {
    const child = startCli(args, emu.token, env);
    await waitForChanges(emu, emu.record.changes.length + 1 + Math.floor(random() * 15), child);
    if (child.process.exitCode === null) {
      child.process.kill('SIGKILL');
      killedMidRun += 1;
    }
    const { signal } = await child.exit;
    if (signal === 'SIGKILL') replayJournal(await readFile(journal, 'utf8').catch(() => ''));
  }
  let output = '';
  for (let i = 0; i < 5; i++) {
    const last = startCli(args, emu.token, env);
    const { code } = await last.exit;
    output = last.output();
    expect(output).not.toMatch(/this is a bug/);
    if (code === 0) return killedMidRun;
  }
  throw new Error(`${args[0]} did not complete: ${output}`);
}

describe('converge and undo survive SIGKILL (child process)', () => {
  let dir: string;
  let snapshot: string;
  let entries: Connection[];
  let emu: RunningEmulator | undefined;

  beforeAll(async () => {
    assertBuiltCliFresh();
    dir = await makeTempDir('converge-crash-');
    snapshot = join(dir, 'gen.snapshot.jsonl');
    entries = await writeGeneratedSnapshot(snapshot, 90, 21);
  });
  afterEach(async () => {
    await killRunningChildren();
    await emu?.close();
    emu = undefined;
  });

  it('several SIGKILLs under commit-then-drop on POST, PUT and DELETE: converged, nothing created or deleted twice; undo restores', async () => {
    // A third identical, a third stale, a third missing; plus 30 extras.
    const seed: Row[] = [];
    const missing: string[] = [];
    const extras: string[] = [];
    entries.forEach((e, i) => {
      if (i % 3 === 0) seed.push(structuredClone(e) as unknown as Row);
      else if (i % 3 === 1)
        seed.push({ ...(structuredClone(e) as unknown as Row), description: `stale ${i}` });
      else missing.push(e.name);
    });
    for (let i = 0; i < 30; i++) {
      const from = structuredClone(entries[i] as unknown as Row);
      const name = `extra-${String(i).padStart(2, '0')}`;
      extras.push(name);
      seed.push({ ...from, name });
    }
    emu = await startEmulator({
      data: { connections: seed as never },
      latencyMs: 15,
      faults:
        'commit-then-drop:0.05@POST:/ds_connections,commit-then-drop:0.05@PUT:*,commit-then-drop:0.05@DELETE:*',
      seed: 4,
    });
    const pre = stateOf(emu);
    // The undo's secrets: those of the target before the run (undo re-creates the extras).
    const before = await writeSnapshotFromEmulator(emu, join(dir, 'target-before.snapshot.jsonl'));
    const { overrides, env: undoEnv } = buildSecretOverrides(before, (name, field) => pre.get(name)?.[field]);
    const undoOverrides = join(dir, 'undo-overrides.json');
    await writeFile(undoOverrides, JSON.stringify(overrides));
    const random = createPrng(99);
    const journal = join(dir, 'converge.journal.jsonl');
    const args = [
      'import',
      snapshot,
      '--to',
      emu.url,
      '--journal',
      journal,
      '--on-conflict',
      'update',
      '--prune',
      '--concurrency',
      '4',
      '--no-progress',
    ];
    const killed = await runWithKills(emu, args, journal, 4, random);
    expect(killed).toBeGreaterThanOrEqual(2);
    const state = stateOf(emu);
    expect([...state.keys()].sort()).toEqual(entries.map((e) => e.name).sort());
    for (const e of entries) expect(state.get(e.name), e.name).toEqual(comparable(e as unknown as Row));
    for (const name of missing) expect(emu.record.changeCount(name, 'create'), name).toBe(1);
    for (const name of extras) expect(emu.record.changeCount(name, 'delete'), name).toBe(1);

    // Creates killed or dropped mid-answer were found by name: in doubt whose they are, so undo deletes
    // them only when told to (one operator, one journal: they are this run's).
    const undoArgs = ['undo', journal, '--overrides', undoOverrides, '--include-in-doubt', '--no-progress'];
    await runWithKills(emu, undoArgs, journal, 2, random, undoEnv);
    expect(stateOf(emu)).toEqual(pre);
    for (const name of missing) expect(emu.record.changeCount(name, 'delete'), name).toBe(1);
    for (const name of extras) expect(emu.record.changeCount(name, 'create'), name).toBe(1);
  }, 180_000);
});
