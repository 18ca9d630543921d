/**
 * `undo` leaves a run's creates that were in doubt and says "pass --include-in-doubt to delete it":
 * doing so takes back those creates of that run, not the run before it (against the emulator on
 * 127.0.0.1, real HTTP).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { send } from '../emulator/raw-http.js';
import { numberedConnections, writeOtherWritersSnapshot } from '../helpers/other-writers-snapshot.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let dir: string;
let target: RunningEmulator | undefined;

beforeEach(async () => {
  dir = await makeTempDir('undo-in-doubt-');
});
afterEach(async () => {
  await target?.close();
  target = undefined;
});

const names = (emu: RunningEmulator) => emu.store.connections.map((c) => c.name).sort();

/**
 * Run 1 creates conn-00..02. Someone deletes conn-01 and conn-02; run 2 creates them again, every answer
 * lost (committed, then the connection dropped): it finds them by name, in doubt whose they are.
 */
async function twoRunsTheSecondInDoubt() {
  const snapshot = await writeOtherWritersSnapshot(dir, numberedConnections(3, '85'));
  target = await startEmulator({ data: { connections: [] } });
  const emu = target;
  const env = { DDS_TARGET_TOKEN: emu.token };
  const journal = join(dir, 'j.jsonl');
  const importArgs = ['import', snapshot, '--to', emu.url, '--journal', journal, '--no-progress'];
  expect((await runCli(importArgs, { env })).exitCode).toBe(0);
  for (const name of ['conn-01', 'conn-02']) expect((await byHandDelete(emu, name)).status).toBe(200);
  emu.setFaults('commit-then-drop@POST:/ds_connections');
  const run2 = await runCli(importArgs, { env });
  emu.setFaults('');
  expect(run2.exitCode, run2.stderr + run2.stdout).toBe(0);
  expect((await runCli(['runs', journal], { env })).stdout).toMatch(/created 2 \(2 in doubt\)/);
  expect(names(emu)).toEqual(['conn-00', 'conn-01', 'conn-02']);
  // A plain undo leaves both, and says how to take them back.
  const undo = await runCli(['undo', journal], { env });
  expect(undo.exitCode, undo.stderr + undo.stdout).toBe(1);
  expect(undo.stdout).toMatch(/Undo of run 2 /);
  expect(undo.stdout).toMatch(/left conn-01: its create was in doubt .*pass --include-in-doubt/);
  expect(names(emu)).toEqual(['conn-00', 'conn-01', 'conn-02']);
  return { emu, env, journal };
}

const byHandDelete = (emu: RunningEmulator, name: string) =>
  send(emu.url, 'DELETE', `/api/v1/ds_connections/${name}`, { token: emu.token });

describe('undo --include-in-doubt after an undo that left creates in doubt', () => {
  it("takes back that run's creates, not the run before; a plain undo then takes back the run before", async () => {
    const { emu, env, journal } = await twoRunsTheSecondInDoubt();
    const run1Id = emu.store.getConnection('conn-00')?._id;

    // The advice, followed: run 2's two creates go; run 1's conn-00 stays.
    emu.record.reset();
    const dry = await runCli(['undo', journal, '--include-in-doubt', '--dry-run'], { env });
    expect(dry.stdout).toMatch(/Plan for undoing run 2 \(the creates its undo left in doubt\)/);
    expect(dry.stdout).not.toMatch(/conn-00/);
    const advised = await runCli(['undo', journal, '--include-in-doubt', '--json'], { env });
    expect(advised.exitCode, advised.stderr + advised.stdout).toBe(0);
    expect(JSON.parse(advised.stdout)).toMatchObject({ ok: true, undone: 2, onlyInDoubt: true });
    expect(
      emu.record.requests
        .filter((r) => r.method === 'DELETE')
        .map((r) => r.path)
        .sort(),
    ).toEqual(['/api/v1/ds_connections/conn-01', '/api/v1/ds_connections/conn-02']);
    expect(names(emu)).toEqual(['conn-00']);
    expect(emu.store.getConnection('conn-00')?._id).toBe(run1Id);

    // Run 2 is wholly undone now: the same again takes back run 1 (its conn-00; the others are gone).
    const runs = await runCli(['runs', journal], { env });
    expect(runs.stdout).toMatch(/import \(undone by run 4\)/);
    expect(runs.stdout).toMatch(/^4 +undo of run 2 \(in-doubt creates\) +finished/m);
    const next = await runCli(['undo', journal, '--include-in-doubt'], { env });
    expect(next.exitCode, next.stderr + next.stdout).toBe(0);
    expect(next.stdout).toMatch(/Undo of run 1 in /);
    expect(names(emu)).toEqual([]);
    const nothing = await runCli(['undo', journal, '--include-in-doubt'], { env });
    expect(nothing.stdout).toMatch(/Nothing to undo/);
  });

  it('an interrupted completion is finished as it was started, even when resumed without the flag', async () => {
    const { emu, env, journal } = await twoRunsTheSecondInDoubt();
    // The completion stops at its first DELETE (the connection reset: in doubt, the run ends, exit 5).
    emu.setFaults('reset@DELETE:*');
    const stopped = await runCli(['undo', journal, '--include-in-doubt'], { env });
    emu.setFaults('');
    expect(stopped.exitCode, stopped.stderr).toBe(5);
    const resumed = await runCli(['undo', journal], { env });
    expect(resumed.exitCode, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/Undo of run 2 \(the creates its undo left in doubt\)/);
    expect(resumed.stderr).toMatch(
      /Finishing the interrupted undo as it was started, with --include-in-doubt/,
    );
    expect(names(emu)).toEqual(['conn-00']);
  });

  it('an interrupted undo of a journal of an earlier version (its run record does not say) is finished with this command line', async () => {
    const { emu, env, journal } = await twoRunsTheSecondInDoubt();
    emu.setFaults('reset@DELETE:*');
    expect((await runCli(['undo', journal, '--include-in-doubt'], { env })).exitCode).toBe(5);
    emu.setFaults('');
    // As an earlier version wrote it: no includeInDoubt on the undo's run record.
    const text = await readFile(journal, 'utf8');
    expect(text).toMatch(/"command":"undo","undoes":2,"includeInDoubt":true/);
    await writeFile(
      journal,
      text.replaceAll(',"includeInDoubt":true', '').replaceAll(',"includeInDoubt":false', ''),
    );
    const resumed = await runCli(['undo', journal, '--include-in-doubt'], { env });
    expect(resumed.exitCode, resumed.stdout + resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toMatch(/Finishing the interrupted undo/);
    expect(names(emu)).toEqual(['conn-00']);
  });

  it('in-doubt creates gone since: nothing to take back, so --include-in-doubt goes on to the run before', async () => {
    const { emu, env, journal } = await twoRunsTheSecondInDoubt();
    for (const name of ['conn-01', 'conn-02']) expect((await byHandDelete(emu, name)).status).toBe(200);
    const next = await runCli(['undo', journal, '--include-in-doubt', '--json'], { env });
    expect(next.exitCode, next.stdout + next.stderr).toBe(0);
    expect(JSON.parse(next.stdout)).toMatchObject({ ok: true, undone: 1 });
    expect(names(emu)).toEqual([]);
    const runs = await runCli(['runs', journal], { env });
    expect(runs.stdout).not.toMatch(/in-doubt creates/);
  });
});
