/**
 * Another writer creates a name this import is about to create (against the emulator on 127.0.0.1, real
 * HTTP): when our POST of it is lost and the look-up finds an object older than our intent, it is
 * `not ours` (reported, journaled, never undone); under `--on-conflict update`, one created by hand
 * mid-run with other fields is compared with its entry and put in line with one PUT.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import type { Connection } from '../../src/model/connection.js';
import type { SnapshotScanProfile } from '../../src/model/scan-profile.js';
import { forward } from '../helpers/list-proxy.js';
import {
  byHand,
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
let proxy: Server | undefined;

beforeEach(async () => {
  dir = await makeTempDir('ownership-');
});
afterEach(async () => {
  await new Promise((resolve) => (proxy ? proxy.close(resolve) : resolve(undefined)));
  proxy = undefined;
  await target?.close();
  target = undefined;
});

const snapshotOf = (connections: Connection[], profiles: SnapshotScanProfile[] = []) =>
  writeOtherWritersSnapshot(dir, connections, profiles);

/**
 * A loopback proxy to `emu`: the first POST creating `name` is not forwarded: `before()` runs, then it is
 * answered 500 (the service failed, nothing applied). Everything else is forwarded as it is.
 */
async function failingFirstPostOf(emu: RunningEmulator, name: string, before: () => Promise<void>) {
  let done = false;
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        if (!done && req.method === 'POST' && body.toString().includes(`"name":"${name}"`)) {
          done = true;
          await before();
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ status: 'error', message: 'Internal server error' }));
          return;
        }
        forward(emu, req, res, body);
      })();
    });
  });
  await new Promise<void>((resolve) => proxy?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}

describe('other writers: whose object it is', () => {
  it('a lost POST whose look-up finds an older object is not ours: exists, journaled, named by runs and undo, never deleted', async () => {
    const connections = numberedConnections(6, '84');
    const snapshot = await snapshotOf(connections);
    target = await startEmulator({ data: { connections: [] } });
    const emu = target;
    // Someone else made conn-03 ten minutes before our request: made by hand now, stamped as then.
    const createdAt = new Date(Date.now() - 10 * 60_000).toISOString();
    const url = await failingFirstPostOf(emu, 'conn-03', async () => {
      expect((await byHand(emu, 'conn-03')).status).toBeLessThan(300);
      const made = emu.store.getConnection('conn-03');
      if (made) made.created_at = createdAt;
    });
    const env = { DDS_TARGET_TOKEN: emu.token };
    const journal = join(dir, 'j.jsonl');
    const report = join(dir, 'report.jsonl');
    const args = ['import', snapshot, '--to', url, '--concurrency', '1', '--journal', journal];
    const run = await runCli([...args, '--report', report], { env });
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    expect(run.stdout).toMatch(/1 not ours: created by someone else before this run's request/);
    expect((await reportLines(report)).find((l) => l.name === 'conn-03')).toMatchObject({
      outcome: 'exists',
      meanwhile: true,
      createdAt,
    });
    expect(await readFile(journal, 'utf8')).toMatch(/"result":"exists"[^\n]*"createdAt"/);
    const runs = await runCli(['runs', journal], { env });
    expect(runs.stdout).toMatch(/created 5, not ours 1/);

    const undo = await runCli(['undo', journal, '--include-in-doubt'], { env });
    expect(undo.exitCode, undo.stderr + undo.stdout).toBe(1);
    expect(undo.stdout).toMatch(/left conn-03: not ours: created by someone else at /);
    expect(emu.store.connections.map((c) => c.name)).toEqual(['conn-03']);
    expect(emu.store.getConnection('conn-03')?.description).toBe('made by hand');
  });

  it('--on-conflict update: a connection created by hand mid-run with other fields gets exactly one PUT (exit 0, reported updated); the same again writes nothing', async () => {
    const connections = numberedConnections(12, '84');
    const last = connections.at(-1) as Connection;
    const profiles = [profileNaming(last)];
    const snapshot = await snapshotOf(connections, profiles);
    target = await startEmulator({ data: { connections: [] }, latencyMs: 40 });
    const emu = target;
    const env = { DDS_TARGET_TOKEN: emu.token };
    const report = join(dir, 'report.jsonl');
    const args = [
      'import',
      snapshot,
      '--to',
      emu.url,
      '--on-conflict',
      'update',
      '--journal',
      join(dir, 'j'),
    ];
    const running = runCli([...args, '--concurrency', '1', '--report', report], { env });
    await whenWriting(emu, last.name);
    const run = await running;
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    expect(emu.record.createCount(last.name, 'connection')).toBe(1);
    const puts = emu.record.changes.filter((c) => c.op === 'update');
    expect(puts.map((c) => c.name)).toEqual([last.name]);
    expect(emu.store.getConnection(last.name)?.description).toBe('source 11');
    const lines = await reportLines(report);
    expect(lines.find((l) => l.name === last.name)).toMatchObject({
      outcome: 'updated',
      fields: ['/description'],
    });
    expect(run.stdout).toMatch(/updated\s+1/);
    // Found equal once put in line: the profile naming it is created, pointing at it.
    expect(lines.find((l) => l.name === 'uses-last')).toMatchObject({ outcome: 'created' });
    const made = emu.store.getConnection(last.name)?._id;
    expect(emu.store.profiles.map((p) => p.dataSourceList)).toEqual([[made]]);

    emu.record.reset();
    const again = await runCli(args, { env });
    expect(again.exitCode, again.stderr + again.stdout).toBe(0);
    expect(emu.record.creates).toEqual([]);
    expect(emu.record.changes.filter((c) => c.op !== 'test')).toEqual([]);

    // Undo deletes what the run created and puts the hand-made connection back as it was, never deletes it.
    const undo = await runCli(['undo', join(dir, 'j')], { env });
    expect(undo.exitCode, undo.stderr + undo.stdout).toBe(0);
    expect(emu.store.connections.map((c) => [c.name, c.description])).toEqual([[last.name, 'made by hand']]);
    expect(emu.store.profiles).toEqual([]);
  });

  it('--on-conflict update: one created by hand mid-run equal to its entry is unchanged: no PUT, exit 0', async () => {
    const connections = numberedConnections(12, '84');
    const snapshot = await snapshotOf(connections);
    target = await startEmulator({ data: { connections: [] }, latencyMs: 40 });
    const emu = target;
    const report = join(dir, 'report.jsonl');
    const args = ['import', snapshot, '--to', emu.url, '--on-conflict', 'update', '--concurrency', '1'];
    const running = runCli([...args, '--report', report, '--journal', join(dir, 'j')], {
      env: { DDS_TARGET_TOKEN: emu.token },
    });
    await whenWriting(emu, 'conn-11', 'source 11');
    const run = await running;
    expect(run.exitCode, run.stderr + run.stdout).toBe(0);
    expect(emu.record.changes.filter((c) => c.op === 'update')).toEqual([]);
    expect((await reportLines(report)).find((l) => l.name === 'conn-11')).toMatchObject({
      outcome: 'unchanged',
    });
  });
});
