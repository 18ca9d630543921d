/**
 * Runs under SIGKILL (the built CLI as a child process, against the emulator on 127.0.0.1): a second
 * import after drift, and an undo of a run that created and deleted scan profiles, each killed mid-run
 * several times and then run to completion: nothing written twice, nothing missing.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SCAN_TEMPLATES, type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { createPrng } from '../../src/emulator/prng.js';
import type { Connection } from '../../src/model/connection.js';
import type { SnapshotScanProfile } from '../../src/model/scan-profile.js';
import { createSnapshotHeader } from '../../src/snapshot/format.js';
import { writeSnapshot } from '../../src/snapshot/write.js';
import { replayJournal } from '../../src/sync/journal/replay.js';
import { send } from '../emulator/raw-http.js';
import { assertBuiltCliFresh } from '../helpers/built-cli.js';
import { killRunningChildren, startCliChild, waitUntil } from '../helpers/cli-child.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const TEMPLATE = DEFAULT_SCAN_TEMPLATES[0]?._id as string;
const DAILY = { cronExpression: '0 2 * * *', timeZone: 'UTC' };

const CONNECTIONS: Connection[] = Array.from(
  { length: 30 },
  (_, i) =>
    ({
      _id: `80${i.toString(16).padStart(22, '0')}`,
      name: `src-${String(i).padStart(2, '0')}`,
      type: 'custom-type',
      description: `source ${i}`,
    }) as Connection,
);
const PROFILES: SnapshotScanProfile[] = Array.from({ length: 12 }, (_, i) => {
  const picked = [CONNECTIONS[i] as Connection, CONNECTIONS[(i * 7 + 3) % 30] as Connection];
  return {
    scanProfile: {
      _id: `81${i.toString(16).padStart(22, '0')}`,
      name: `profile-${String(i).padStart(2, '0')}`,
      dataSourceList: picked.map((c) => c._id as string),
      scanTemplateId: TEMPLATE,
      schedule: DAILY as never,
    },
    dataSourceNames: picked.map((c) => c.name),
  };
});
/** A connection and profiles the target holds before the first run, not in the snapshot (pruned by run 1). */
const LEGACY = { _id: '820000000000000000000000', name: 'legacy-db', type: 'custom-type' };
const OLD_PROFILES = Array.from({ length: 6 }, (_, i) => ({
  name: `old-${i}`,
  dataSourceList: [LEGACY._id],
  scanTemplateId: TEMPLATE,
  schedule: DAILY,
}));

describe('runs under SIGKILL (child process)', () => {
  let dir: string;
  let snapshot: string;
  let emu: RunningEmulator | undefined;

  beforeAll(async () => {
    assertBuiltCliFresh();
    dir = await makeTempDir('runs-crash-');
    snapshot = join(dir, 's.snapshot.jsonl');
    const header = createSnapshotHeader({
      tool: 'dds-migrate test',
      source: { url: 'https://prod.example.com', environment: 'prod' },
      include: ['connections', 'scanProfiles'],
    });
    await writeSnapshot({ path: snapshot }, header, CONNECTIONS, { profiles: () => PROFILES });
  });

  afterEach(async () => {
    await killRunningChildren();
    await emu?.close();
    emu = undefined;
  });

  /** Start `args`, kill it once `more` changes were applied (if still running), `kills` times; then finish it. */
  async function runWithKills(
    args: string[],
    journal: string,
    kills: number,
    random: () => number,
  ): Promise<number> {
    const target = emu as RunningEmulator;
    let killed = 0;
    for (let i = 0; i < kills; i++) {
      const child = startCliChild(args, { DDS_TARGET_TOKEN: target.token });
      const goal = target.record.changes.length + 1 + Math.floor(random() * 6);
      await waitUntil(child, () => target.record.changes.length >= goal);
      if (child.process.exitCode === null) {
        child.process.kill('SIGKILL');
        killed += 1;
      }
      await child.exit;
      replayJournal(await readFile(journal, 'utf8'));
    }
    let output = '';
    for (let i = 0; i < 4; i++) {
      const last = startCliChild(args, { DDS_TARGET_TOKEN: target.token });
      const { code } = await last.exit;
      output = last.output();
      expect(last.output()).not.toMatch(/this is a bug/);
      if (code === 0 || (args[0] === 'undo' && code === 1)) return killed;
    }
    throw new Error(`${args.join(' ')} did not complete: ${output}`);
  }

  it('a second run after drift, then undo of both runs, each killed mid-run: nothing twice, nothing missing', async () => {
    emu = await startEmulator({
      data: { connections: [LEGACY], scanProfiles: OLD_PROFILES },
      latencyMs: 25,
      seed: 11,
    });
    const faults = 'commit-then-drop:0.1@POST:/ds_connections,commit-then-drop:0.1@POST:/scanProfiles';
    const target = emu;
    const random = createPrng(5);
    const journal = join(dir, 'kill.journal.jsonl');
    const importArgs = [
      'import',
      snapshot,
      '--to',
      target.url,
      '--journal',
      journal,
      '--on-conflict',
      'update',
      '--prune',
      '--concurrency',
      '3',
      '--no-progress',
    ];
    target.setFaults(faults);
    const first = startCliChild(importArgs, { DDS_TARGET_TOKEN: target.token });
    expect((await first.exit).code, first.output()).toBe(0);
    target.setFaults('');
    expect(target.store.profiles.map((p) => p.name).sort()).toEqual(
      PROFILES.map((p) => p.scanProfile.name).sort(),
    );

    // Drift by hand (through the API, as a person's script would): connections deleted, a few
    // edited, extras added.
    const http = (method: string, path: string, body?: unknown) =>
      send(target.url, method, `/api/v1${path}`, {
        token: target.token,
        ...(body === undefined ? {} : { body }),
      });
    // (Only connections no profile names: a profile naming a connection deleted by hand has changed
    // since run 1 created it, and undo leaves such a profile, as it says.)
    const named = new Set(PROFILES.flatMap((p) => p.dataSourceNames));
    const deleted = CONNECTIONS.map((c) => c.name).filter((name) => !named.has(name));
    expect(deleted.length).toBeGreaterThan(5);
    for (const name of deleted)
      expect((await http('DELETE', `/ds_connections/${name}`)).status).toBeLessThan(300);
    const edited = ['src-01', 'src-03', 'src-05'];
    for (const name of edited) {
      const was = target.store.getConnection(name);
      const put = await http('PUT', `/ds_connections/${name}`, {
        ds_connection: { ...was, description: 'edited' },
      });
      expect(put.status).toBeLessThan(300);
    }
    const extras = ['hand-1', 'hand-2', 'hand-3'];
    for (const name of extras) {
      const post = await http('POST', '/ds_connections', { ds_connection: { name, type: 'custom-type' } });
      expect(post.status).toBeLessThan(300);
    }
    target.record.reset();
    target.setFaults(faults);

    expect(await runWithKills(importArgs, journal, 3, random)).toBeGreaterThanOrEqual(2);
    for (const name of deleted) expect(target.record.changeCount(name, 'create', 'connection'), name).toBe(1);
    for (const name of edited) expect(target.record.changeCount(name, 'update', 'connection'), name).toBe(1);
    for (const name of extras) expect(target.record.changeCount(name, 'delete', 'connection'), name).toBe(1);
    expect(target.store.connections.map((c) => c.name).sort()).toEqual(CONNECTIONS.map((c) => c.name).sort());
    // Profiles name the connections by the ids they have now.
    for (const p of PROFILES) {
      const now = target.store.profiles.find((x) => x.name === p.scanProfile.name);
      expect(now?.dataSourceList).toEqual(
        p.dataSourceNames.map((n) => target.store.getConnection(n as string)?._id),
      );
    }

    // Undo run 2 (killed), then undo run 1, which created 12 profiles and deleted 6 (killed too).
    target.record.reset();
    const undoArgs = ['undo', journal, '--include-in-doubt', '--no-progress'];
    await runWithKills(undoArgs, journal, 2, random);
    for (const name of deleted) expect(target.record.changeCount(name, 'delete', 'connection'), name).toBe(1);
    for (const name of extras) expect(target.record.changeCount(name, 'create', 'connection'), name).toBe(1);
    target.record.reset();
    expect(await runWithKills(undoArgs, journal, 2, random)).toBeGreaterThanOrEqual(1);
    for (const p of PROFILES)
      expect(target.record.changeCount(p.scanProfile.name, 'delete', 'scanProfile')).toBe(1);
    for (const p of OLD_PROFILES) expect(target.record.changeCount(p.name, 'create', 'scanProfile')).toBe(1);
    // As before run 1, but for what was made or changed by hand (the extras, the edited ones: left).
    expect(target.store.profiles.map((p) => p.name).sort()).toEqual(OLD_PROFILES.map((p) => p.name).sort());
    expect(target.store.connections.map((c) => c.name).sort()).toEqual(
      [...edited, ...extras, LEGACY.name].sort(),
    );
    // The profiles created again name legacy-db by the id it has now (it was created again too).
    const legacyNow = target.store.getConnection(LEGACY.name)?._id;
    expect(legacyNow).not.toBe(LEGACY._id);
    for (const p of target.store.profiles) expect(p.dataSourceList).toEqual([legacyNow]);
  }, 180_000);
});
