/**
 * Scan profiles that list their data sources by connection name (api-notes [code]: BigID's CI action;
 * [seen]: real bodies often do), by `_id` (the tutorial), or both: a restore keeps each element's form,
 * a re-run writes nothing, and `diff` and `verify` compare the lists by connection name. The CLI
 * in-process against emulators on 127.0.0.1 (the source with `--profile-sources names` too).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SCAN_TEMPLATES,
  generateConnections,
  type RunningEmulator,
} from '../../src/emulator/index.js';
import { emulatorsClosedAfterEach } from '../helpers/emulators.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const connections = generateConnections(4, { seed: 11 }).map((c, i) => ({
  ...c,
  _id: `5eed${String(i).padStart(20, '0')}`,
}));
type Seeded = (typeof connections)[number];
const [c0, c1, c2, c3] = connections as [Seeded, Seeded, Seeded, Seeded];

function profile(name: string, dataSourceList: string[]): Record<string, unknown> {
  return {
    name,
    dataSourceList,
    scanTemplateId: DEFAULT_SCAN_TEMPLATES[0]?._id,
    schedule: { cronExpression: '0 2 * * *', timeZone: 'UTC' },
  };
}

const emulator = emulatorsClosedAfterEach();

/** Export `source`, import into an empty target; the snapshot and the target. */
async function restore(
  source: RunningEmulator,
): Promise<{ snapshot: string; target: RunningEmulator; env: Record<string, string> }> {
  // No reference endpoints on the target: its scanners and credentials are not what is tested here.
  const target = await emulator({ referencesApi: false });
  const dir = await makeTempDir('profiles-by-name-');
  const snapshot = join(dir, 'src.snapshot.jsonl');
  const env = { DDS_SOURCE_TOKEN: source.token, DDS_TARGET_TOKEN: target.token, DDS_TOKEN: target.token };
  const exported = await runCli(['export', '--from', source.url, '-o', snapshot], { env });
  expect(exported.exitCode, exported.stderr).toBe(0);
  const imported = await runCli(['import', snapshot, '--to', target.url, '--no-progress'], { env, cwd: dir });
  expect(imported.exitCode, imported.stderr + imported.stdout).toBe(0);
  return { snapshot, target, env };
}

function listOf(emu: RunningEmulator, name: string): unknown {
  return emu.store.profiles.find((p) => p.name === name)?.dataSourceList;
}

async function expectSettled(
  source: RunningEmulator,
  snapshot: string,
  target: RunningEmulator,
  env: Record<string, string>,
) {
  const before = target.record.changes.length;
  const again = await runCli(['import', snapshot, '--to', target.url, '--no-progress'], { env });
  expect(again.exitCode, again.stderr).toBe(0);
  expect(target.record.changes.length, 'a re-run writes nothing').toBe(before);
  const diffSnapshot = await runCli(['diff', '--from', snapshot, '--to', target.url, '--format', 'json'], {
    env,
  });
  expect(diffSnapshot.exitCode, diffSnapshot.stdout).toBe(0);
  expect(JSON.parse(diffSnapshot.stdout).scanProfiles).toEqual({ added: [], removed: [], changed: [] });
  const diffEnvironments = await runCli(
    ['diff', '--from', source.url, '--to', target.url, '--format', 'json'],
    {
      env,
    },
  );
  expect(diffEnvironments.exitCode, diffEnvironments.stdout).toBe(0);
  const verify = await runCli(['verify', snapshot, '--env', target.url, '--format', 'json'], { env });
  expect(verify.exitCode, verify.stdout).toBe(0);
}

describe('scan profiles that name their data sources', () => {
  it('names stay names, ids become the target ids, a mixed list keeps each form', async () => {
    const source = await emulator({
      exportClearSecrets: true,
      data: {
        connections,
        scanProfiles: [
          profile('by-name', [c0.name, c1.name]),
          profile('by-id', [c2._id]),
          profile('mixed', [c3.name, c0._id]),
        ],
      },
    });
    const { snapshot, target, env } = await restore(source);
    const idOf = (name: string) => target.store.getConnection(name)?._id;
    expect(listOf(target, 'by-name')).toEqual([c0.name, c1.name]);
    expect(listOf(target, 'by-id')).toEqual([idOf(c2.name)]);
    expect(listOf(target, 'mixed')).toEqual([c3.name, idOf(c0.name)]);
    expect(idOf(c0.name)).not.toBe(c0._id);
    await expectSettled(source, snapshot, target, env);
  });

  it('a source that answers every list by name (--profile-sources names) is restored by name', async () => {
    const source = await emulator({
      exportClearSecrets: true,
      profileSources: 'names',
      data: { connections, scanProfiles: [profile('nightly', [c1._id, c2._id])] },
    });
    const { snapshot, target, env } = await restore(source);
    expect(listOf(target, 'nightly')).toEqual([c1.name, c2.name]);
    await expectSettled(source, snapshot, target, env);
  });
});
