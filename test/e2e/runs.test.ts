/**
 * Runs, end to end (the CLI in-process against the emulator on 127.0.0.1, real HTTP): a finished
 * import never hides drift made by hand afterwards; the same command then writes exactly what differs
 * (connections and scan profiles), and again nothing; `runs` lists the runs; `undo` takes them back one
 * at a time, newest first, scan profiles included, and then writes nothing.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_SCAN_TEMPLATES, type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import type { Connection } from '../../src/model/connection.js';
import type { SnapshotScanProfile } from '../../src/model/scan-profile.js';
import { createSnapshotHeader } from '../../src/snapshot/format.js';
import { writeSnapshot } from '../../src/snapshot/write.js';
import { send } from '../emulator/raw-http.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const TEMPLATE = DEFAULT_SCAN_TEMPLATES[0]?._id as string;
const DAILY = { cronExpression: '0 2 * * *', timeZone: 'UTC' };

const CONNECTIONS = ['alpha', 'beta', 'gamma', 'delta'].map(
  (name, i) =>
    ({
      _id: `${String(i).repeat(24)}`,
      name,
      type: 'custom-type',
      description: `the ${name} source`,
    }) as Connection,
);

function profile(name: string, names: string[]): SnapshotScanProfile {
  return {
    scanProfile: {
      _id: `${name}-src`,
      name,
      dataSourceList: names.map((n) => CONNECTIONS.find((c) => c.name === n)?._id as string),
      scanTemplateId: TEMPLATE,
      schedule: DAILY as never,
    },
    dataSourceNames: names,
  };
}

let dir: string;
let target: RunningEmulator;
let snapshot: string;
let journal: string;

beforeEach(async () => {
  dir = await makeTempDir('runs-e2e-');
  snapshot = join(dir, 's.snapshot.jsonl');
  journal = join(dir, 's.journal.jsonl');
  const header = createSnapshotHeader({
    tool: 'test',
    source: { url: 'https://prod.example.com', environment: 'prod' },
    include: ['connections', 'scanProfiles'],
  });
  await writeSnapshot({ path: snapshot }, header, CONNECTIONS, {
    profiles: () => [profile('nightly', ['alpha', 'beta']), profile('weekly', ['gamma'])],
  });
  target = await startEmulator({ data: { connections: [], scanProfiles: [] } });
});
afterEach(async () => {
  await target.close();
});

const importArgs = () => [
  'import',
  snapshot,
  '--to',
  target.url,
  '--on-conflict',
  'update',
  '--prune',
  '--journal',
  journal,
];
const env = () => ({ DDS_TARGET_TOKEN: target.token });
const http = (method: string, path: string, body?: unknown) =>
  send(target.url, method, `/api/v1${path}`, {
    token: target.token,
    ...(body === undefined ? {} : { body }),
  });

/** The applied writes since `from`, as `op kind name`. */
function writesSince(from: number): string[] {
  return target.record.changes.slice(from).map((c) => `${c.op} ${c.kind} ${c.name}`);
}

/** The target's connections and profiles, comparable (ids of profiles' sources as names). */
function stateOf(): { connections: Record<string, unknown>; profiles: Record<string, unknown> } {
  const byId = new Map(target.store.connections.map((c) => [c._id, c.name]));
  const connections = Object.fromEntries(
    target.store.connections.map((c) => [c.name, { type: c.type, description: c.description }]),
  );
  const profiles = Object.fromEntries(
    target.store.profiles.map((p) => [
      p.name,
      { list: (p.dataSourceList as string[]).map((id) => byId.get(id) ?? id), schedule: p.schedule },
    ]),
  );
  return { connections, profiles };
}

describe('runs: a re-run converges against the live target, undo goes back run by run', () => {
  it('after hand edits the same command writes exactly what differs, then nothing; undo twice restores; a third undo writes nothing', async () => {
    const before = stateOf();
    const first = await runCli(importArgs(), { env: env() });
    expect(first.exitCode, first.stderr).toBe(0);
    expect(Object.keys(stateOf().connections).sort()).toEqual(['alpha', 'beta', 'delta', 'gamma']);
    expect(Object.keys(stateOf().profiles).sort()).toEqual(['nightly', 'weekly']);
    const afterFirst = stateOf();

    // By hand: one connection edited, one deleted, one extra created, one scan profile deleted.
    const beta = target.store.connections.find((c) => c.name === 'beta');
    expect(
      (await http('PUT', '/ds_connections/beta', { ds_connection: { ...beta, description: 'edited' } }))
        .status,
    ).toBe(200);
    expect((await http('DELETE', '/ds_connections/gamma')).status).toBeLessThan(300);
    const extra = { name: 'hand-made', type: 'custom-type', description: 'made by hand' };
    expect((await http('POST', '/ds_connections', { ds_connection: extra })).status).toBeLessThan(300);
    const weekly = target.store.profiles.find((p) => p.name === 'weekly');
    expect((await http('DELETE', `/scanProfiles/${weekly?._id}`)).status).toBeLessThan(300);
    const handMade = stateOf();

    // The same command: exactly one PUT, one POST, one DELETE and one profile POST, in the import's
    // order: connection creates, updates, deletes, then scan profiles.
    const mark = target.record.changes.length;
    const second = await runCli(importArgs(), { env: env() });
    expect(second.exitCode, second.stderr).toBe(0);
    expect(writesSince(mark)).toEqual([
      'create connection gamma',
      'update connection beta',
      'delete connection hand-made',
      'create scanProfile weekly',
    ]);
    // The re-created profile names gamma by the id gamma has now.
    const gammaNow = target.store.connections.find((c) => c.name === 'gamma');
    const weeklyNow = target.store.profiles.find((p) => p.name === 'weekly');
    expect(weeklyNow?.dataSourceList).toEqual([gammaNow?._id]);
    expect(stateOf()).toEqual(afterFirst);

    // And again: nothing.
    const mark2 = target.record.changes.length;
    const third = await runCli(importArgs(), { env: env() });
    expect(third.exitCode, third.stderr).toBe(0);
    expect(writesSince(mark2)).toEqual([]);
    expect(third.stdout).toMatch(/up to date/);

    // runs: two import runs, with their counts.
    const listed = await runCli(['runs', journal, '--format', 'json'], { env: env() });
    expect(listed.exitCode, listed.stderr).toBe(0);
    const runs = JSON.parse(listed.stdout) as { runs: Record<string, unknown>[] };
    expect(runs.runs).toEqual([
      expect.objectContaining({
        run: 1,
        command: 'import',
        status: 'finished',
        connections: expect.objectContaining({ created: 4, updated: 0, deleted: 0 }),
        scanProfiles: expect.objectContaining({ created: 2 }),
      }),
      expect.objectContaining({
        run: 2,
        command: 'import',
        status: 'finished',
        connections: expect.objectContaining({ created: 1, updated: 1, deleted: 1 }),
        scanProfiles: expect.objectContaining({ created: 1 }),
      }),
    ]);
    const table = await runCli(['runs', journal, '--format', 'table'], { env: env() });
    expect(table.stdout).toMatch(/^run\s+what\s+status\s+started\s+connections\s+scan profiles$/m);
    expect(table.stdout).toMatch(
      /^2\s+import\s+finished\s+\S+\s+created 1, updated 1, deleted 1\s+created 1$/m,
    );
    // --json with another format is refused, as by every command that renders.
    const both = await runCli(['runs', journal, '--json', '--format', 'table'], { env: env() });
    expect(both.exitCode).toBe(2);
    expect(both.stderr).toMatch(/--json cannot be combined with --format table/);
    expect(both.stdout).toBe('');

    // undo: run 2 only (the profile too), back to the state the hand edits made.
    const markUndo1 = target.record.changes.length;
    const undo1 = await runCli(['undo', journal], { env: env() });
    expect(undo1.exitCode, undo1.stderr + undo1.stdout).toBe(0);
    expect(stateOf()).toEqual(handMade);
    // Restores first (kind by kind), then the deletes of what the run created in reverse kind order:
    // the profile before the connection it names.
    const undone1 = writesSince(markUndo1);
    expect(undone1.slice(0, 2).sort()).toEqual(['create connection hand-made', 'update connection beta']);
    expect(undone1.slice(2)).toEqual(['delete scanProfile weekly', 'delete connection gamma']);
    // undo again: run 1. What run 1 created and nobody changed is deleted; beta, edited by hand since,
    // is left and named; the hand-made connection was never the import's.
    const markUndo2 = target.record.changes.length;
    const undo2 = await runCli(['undo', journal], { env: env() });
    expect(undo2.exitCode).toBe(1);
    const undone2 = writesSince(markUndo2);
    expect(undone2[0]).toBe('delete scanProfile nightly');
    expect(undone2.slice(1).sort()).toEqual(['delete connection alpha', 'delete connection delta']);
    expect(undo2.stdout).toMatch(/left beta: changed since the import created it/);
    expect(Object.keys(stateOf().connections).sort()).toEqual(['beta', 'hand-made']);
    expect(stateOf().profiles).toEqual(before.profiles);
    // A third: nothing left to undo, nothing written.
    const mark3 = target.record.changes.length;
    const undo3 = await runCli(['undo', journal], { env: env() });
    expect(undo3.exitCode, undo3.stderr).toBe(0);
    expect(undo3.stdout).toMatch(/Nothing to undo/);
    expect(writesSince(mark3)).toEqual([]);
    const finalRuns = JSON.parse((await runCli(['runs', journal, '--json'], { env: env() })).stdout) as {
      runs: { run: number; command: string; undoes: number | null; undoneBy: number | null }[];
    };
    expect(finalRuns.runs.map((r) => [r.run, r.command, r.undoes, r.undoneBy])).toEqual([
      [1, 'import', null, 4],
      [2, 'import', null, 3],
      [3, 'undo', 2, null],
      [4, 'undo', 1, null],
    ]);
  });

  it('undo puts a pruned scan profile back before it deletes the profiles and connections the run created', async () => {
    await target.close();
    // In the target only: --prune deletes both; undo creates the connection again, then the profile on
    // the id the connection has then.
    const extra = { _id: 'e'.repeat(24), name: 'extra', type: 'custom-type', description: 'target only' };
    const old = { name: 'old', dataSourceList: [extra._id], scanTemplateId: TEMPLATE, schedule: DAILY };
    target = await startEmulator({ data: { connections: [extra as never], scanProfiles: [old as never] } });
    const first = await runCli(importArgs(), { env: env() });
    expect(first.exitCode, first.stderr).toBe(0);
    expect(Object.keys(stateOf().profiles).sort()).toEqual(['nightly', 'weekly']);

    const mark = target.record.changes.length;
    const undo = await runCli(['undo', journal], { env: env() });
    expect(undo.exitCode, undo.stderr + undo.stdout).toBe(0);
    // Restores kind by kind (what --prune deleted), then the run's creations in reverse kind order.
    const undone = writesSince(mark);
    expect(undone.slice(0, 2)).toEqual(['create connection extra', 'create scanProfile old']);
    expect(undone.slice(2, 4).sort()).toEqual(['delete scanProfile nightly', 'delete scanProfile weekly']);
    expect(undone.slice(4).sort()).toEqual(CONNECTIONS.map((c) => `delete connection ${c.name}`).sort());
    expect(stateOf()).toEqual({
      connections: { extra: { type: 'custom-type', description: 'target only' } },
      profiles: { old: { list: ['extra'], schedule: DAILY } },
    });
  });
});
