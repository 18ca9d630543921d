/**
 * Reliability of the scan profile phase: the import runs as a child process (the built CLI) and is
 * SIGKILLed while it creates profiles, under commit-then-drop faults on POST /scanProfiles (the service
 * applies the create, then the answer is lost); re-running must finish with no profile created twice
 * and none missing (an intent with no outcome is looked up by name before anything is sent again).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_SCAN_TEMPLATES,
  generateConnections,
  type RunningEmulator,
  startEmulator,
} from '../../src/emulator/index.js';
import { createPrng } from '../../src/emulator/prng.js';
import type { Connection } from '../../src/model/connection.js';
import type { SnapshotScanProfile } from '../../src/model/scan-profile.js';
import { createSnapshotHeader } from '../../src/snapshot/format.js';
import { writeSnapshot } from '../../src/snapshot/write.js';
import { replayJournal, writesOf } from '../../src/sync/journal/replay.js';
import { assertBuiltCliFresh } from '../helpers/built-cli.js';
import { type CliChild, killRunningChildren, startCliChild, waitUntil } from '../helpers/cli-child.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { targetReferences } from './import.helpers.js';

const startImport = (args: readonly string[], token: string) =>
  startCliChild(args, { DDS_TARGET_TOKEN: token });

function profileCreates(emu: RunningEmulator): number {
  return emu.record.creates.filter((c) => c.kind === 'scanProfile').length;
}

/** Resolve once the emulator has applied `count` profile creates, or the child has exited. */
function waitForProfileCreates(emu: RunningEmulator, count: number, child: CliChild): Promise<void> {
  return waitUntil(child, () => profileCreates(emu) >= count);
}

describe('import: SIGKILL during the scan profile phase (child process)', () => {
  let dir: string;
  let snapshot: string;
  let connections: Connection[];
  let profiles: SnapshotScanProfile[];
  let emu: RunningEmulator | undefined;

  beforeAll(async () => {
    assertBuiltCliFresh();
    dir = await makeTempDir('import-profiles-crash-');
    snapshot = join(dir, 'gen.snapshot.jsonl');
    connections = generateConnections(12, { seed: 21 }).map((c, i) => ({
      ...(c as unknown as Connection),
      _id: `70${i.toString(16).padStart(22, '0')}`,
    }));
    const template = DEFAULT_SCAN_TEMPLATES[0]?._id as string;
    profiles = Array.from({ length: 40 }, (_, i) => {
      const picked = [connections[i % 12], connections[(i * 5 + 3) % 12]] as Connection[];
      return {
        scanProfile: {
          _id: `71${i.toString(16).padStart(22, '0')}`,
          name: `profile-${String(i).padStart(2, '0')}`,
          dataSourceList: picked.map((c) => c._id as string),
          scanTemplateId: template,
          schedule: { cronExpression: '0 2 * * *', timeZone: 'UTC' },
        },
        dataSourceNames: picked.map((c) => c.name),
      };
    });
    const header = createSnapshotHeader({
      tool: 'dds-migrate test',
      source: { url: 'https://prod.example.com', environment: 'prod' },
      include: ['connections', 'scanProfiles'],
    });
    await writeSnapshot({ path: snapshot }, header, connections, { profiles: () => profiles });
  });

  afterEach(async () => {
    await killRunningChildren();
    await emu?.close();
    emu = undefined;
  });

  it('four SIGKILLs while profiles are created, then completion: every profile once, remapped', async () => {
    emu = await startEmulator({
      data: { connections: [], ...targetReferences() },
      latencyMs: 15,
      faults: 'commit-then-drop:0.1@POST:/scanProfiles',
      seed: 7,
    });
    const random = createPrng(99);
    const journal = join(dir, 'kill.journal.jsonl');
    const args = ['import', snapshot, '--to', emu.url, '--journal', journal, '--no-progress'];
    let killedInPhase = 0;
    for (let i = 0; i < 4; i++) {
      const child = startImport(args, emu.token);
      await waitForProfileCreates(emu, profileCreates(emu) + 1 + Math.floor(random() * 8), child);
      if (child.process.exitCode === null) {
        child.process.kill('SIGKILL');
        killedInPhase += 1;
      }
      await child.exit;
      // Whatever was torn, the journal still replays.
      replayJournal(await readFile(journal, 'utf8'));
    }
    expect(killedInPhase).toBeGreaterThanOrEqual(2);
    const last = startImport(args, emu.token);
    const { code } = await last.exit;
    expect(last.output()).not.toMatch(/this is a bug/);
    expect(code).toBe(0);
    for (const c of connections) expect(emu.record.createCount(c.name, 'connection')).toBe(1);
    for (const p of profiles) {
      expect(emu.record.createCount(p.scanProfile.name, 'scanProfile'), p.scanProfile.name).toBe(1);
      const created = emu.store.profiles.find((x) => x.name === p.scanProfile.name);
      const expected = p.dataSourceNames.map((n) => emu?.store.getConnection(n as string)?._id);
      expect(created?.dataSourceList).toEqual(expected);
    }
    expect(emu.store.profiles).toHaveLength(profiles.length);
    expect(emu.record.requests.some((r) => r.fault === 'commit-then-drop')).toBe(true);
    const states = writesOf(replayJournal(await readFile(journal, 'utf8')).runs.at(-1), 'scan-profile');
    expect([...states.values()].every((s) => s.state === 'done')).toBe(true);
  }, 120_000);
});
