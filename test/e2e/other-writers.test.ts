/**
 * Other writers of the same target (against the emulator on 127.0.0.1, real HTTP): a connection created
 * by hand while an import runs is reported `exists`, not failed, and a scan profile naming it is not
 * created; two imports of one snapshot with different journals under POSTs failing with not-applied
 * 500s create every connection once, and each journal's undo deletes only what its own run provably
 * created.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import type { Connection } from '../../src/model/connection.js';
import type { SnapshotScanProfile } from '../../src/model/scan-profile.js';
import { replayJournal } from '../../src/sync/journal/replay.js';
import { assertBuiltCliFresh } from '../helpers/built-cli.js';
import { killRunningChildren, startCliChild } from '../helpers/cli-child.js';
import {
  numberedConnections,
  profileNaming,
  reportLines,
  whenWriting,
  writeOtherWritersSnapshot,
} from '../helpers/other-writers-snapshot.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let dir: string;
let target: RunningEmulator | undefined;

beforeEach(async () => {
  dir = await makeTempDir('other-writers-');
});
afterEach(async () => {
  await killRunningChildren();
  await target?.close();
  target = undefined;
});

const snapshotOf = (connections: Connection[], profiles: SnapshotScanProfile[] = []) =>
  writeOtherWritersSnapshot(dir, connections, profiles);

/** The names a journal's runs provably created (their own POST answered with success). */
function provablyCreated(text: string): Set<string> {
  const replay = replayJournal(text);
  const names = new Set<string>();
  for (const run of replay.runs)
    for (const w of run.writes.values())
      if (w.object === 'connection' && w.op === 'create' && w.state === 'done' && w.via === 'post')
        names.add(w.name);
  return names;
}

describe('other writers', () => {
  it('a connection created by hand mid-run is reported exists (exit 0); the profile naming it is not created', async () => {
    const connections = numberedConnections(12, '83');
    const last = connections.at(-1) as Connection;
    const profiles = [profileNaming(last)];
    const snapshot = await snapshotOf(connections, profiles);
    target = await startEmulator({ data: { connections: [] }, latencyMs: 40 });
    const emu = target;
    const report = join(dir, 'report.jsonl');
    const running = runCli(
      [
        'import',
        snapshot,
        '--to',
        emu.url,
        '--concurrency',
        '1',
        '--report',
        report,
        '--journal',
        join(dir, 'j'),
      ],
      { env: { DDS_TARGET_TOKEN: emu.token } },
    );
    await whenWriting(emu, last.name);
    const run = await running;
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    expect(emu.record.createCount(last.name, 'connection')).toBe(1);
    expect(emu.store.getConnection(last.name)?.description).toBe('made by hand');
    const lines = await reportLines(report);
    expect(lines.find((l) => l.name === last.name)).toMatchObject({ outcome: 'exists', meanwhile: true });
    expect(lines.find((l) => l.name === 'uses-last')).toMatchObject({ outcome: 'skipped' });
    expect(emu.store.profiles.map((p) => p.name)).toEqual([]);
    expect(run.stdout).toMatch(/uses-last/);
  });

  it('two imports with different journals under not-applied 500s: each connection once; each undo deletes only its own provable creates', async () => {
    assertBuiltCliFresh();
    const connections = numberedConnections(40, '83');
    const snapshot = await snapshotOf(connections);
    target = await startEmulator({
      data: { connections: [] },
      latencyMs: 10,
      faults: '500:0.3@POST:/ds_connections',
      seed: 3,
    });
    const emu = target;
    const journals = [join(dir, 'a.journal.jsonl'), join(dir, 'b.journal.jsonl')];
    const importUntilDone = async (journal: string) => {
      for (let i = 0; i < 8; i++) {
        const child = startCliChild(
          ['import', snapshot, '--to', emu.url, '--journal', journal, '--no-progress'],
          {
            DDS_TARGET_TOKEN: emu.token,
          },
        );
        const { code } = await child.exit;
        expect(child.output()).not.toMatch(/this is a bug/);
        if (code === 0) return;
      }
      throw new Error(`import with ${journal} did not complete`);
    };
    await Promise.all(journals.map(importUntilDone));
    for (const c of connections) expect(emu.record.createCount(c.name, 'connection'), c.name).toBe(1);

    const [ownA, ownB] = await Promise.all(
      journals.map(async (j) => provablyCreated(await readFile(j, 'utf8'))),
    );
    // A name is provably one run's at most.
    for (const name of ownA ?? []) expect(ownB?.has(name), name).toBe(false);
    for (const [journal, own] of [
      [journals[0], ownA],
      [journals[1], ownB],
    ] as const) {
      emu.setFaults('');
      emu.record.reset();
      const undo = await runCli(['undo', journal as string], { env: { DDS_TARGET_TOKEN: emu.token } });
      expect([0, 1]).toContain(undo.exitCode);
      const deleted = emu.record.changes.filter((c) => c.op === 'delete').map((c) => c.name);
      expect(new Set(deleted)).toEqual(own);
    }
    // What neither run provably created is left, and was named.
    const left = connections.map((c) => c.name).filter((n) => !ownA?.has(n) && !ownB?.has(n));
    expect(emu.store.connections.map((c) => c.name).sort()).toEqual(left.sort());
  }, 120_000);
});
