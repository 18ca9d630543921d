/**
 * Nothing relies on list order or on a fixed key set (api-notes [seen]: the same sandbox connections came
 * back in another order months apart, `last_sub_scan_id` absent in the older answer, a user-made
 * connection with 10 keys and no `enabled`). The target holds the same connections and profiles as the
 * snapshot, listed in the opposite order with their keys in another order, one connection without
 * `enabled` and one with a key the others lack: validate, diff, verify and import (converge) agree
 * that nothing differs.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SCAN_TEMPLATES, generateConnections } from '../../src/emulator/index.js';
import type { SeedConnection } from '../../src/emulator/types.js';
import { emulatorsClosedAfterEach } from '../helpers/emulators.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const emulator = emulatorsClosedAfterEach({ referencesApi: false });

/** The same object with its keys in reverse order. */
function reversedKeys<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).reverse()) as T;
}

const base = generateConnections(12, { seed: 21 }).map((c, i) => ({
  ...c,
  _id: `0dd${String(i).padStart(21, '0')}`,
}));
// A user-made connection without `enabled`, and one with a key no other has.
const connections: SeedConnection[] = base.map((c, i) => {
  if (i === 3)
    return Object.fromEntries(Object.entries(c).filter(([k]) => k !== 'enabled')) as SeedConnection;
  return i === 5 ? { ...c, last_sub_scan_id: 'abc' } : c;
});
const profiles = [0, 1, 2].map((i) => ({
  _id: `0ee${String(i).padStart(21, '0')}`,
  name: `profile-${i}`,
  dataSourceList: [base[i]?._id as string, base[i + 3]?.name as string],
  scanTemplateId: DEFAULT_SCAN_TEMPLATES[0]?._id,
  schedule: { cronExpression: '0 2 * * *', timeZone: 'UTC' },
}));

describe('list order and key sets', () => {
  it('validate, diff, verify and import find nothing to change', async () => {
    expect(connections[3]).not.toHaveProperty('enabled');
    const source = await emulator({ data: { connections, scanProfiles: profiles } });
    const target = await emulator({
      data: {
        connections: [...connections].reverse().map(reversedKeys),
        scanProfiles: [...profiles].reverse().map(reversedKeys),
      },
    });
    const dir = await makeTempDir('order-and-keys-');
    const snapshot = join(dir, 's.snapshot.jsonl');
    const env = { DDS_SOURCE_TOKEN: source.token, DDS_TARGET_TOKEN: target.token, DDS_TOKEN: target.token };
    const exported = await runCli(['export', '--from', source.url, '-o', snapshot], { env });
    expect(exported.exitCode, exported.stderr).toBe(0);

    const validate = await runCli(['validate', snapshot], { env, cwd: dir });
    expect(validate.exitCode, validate.stdout + validate.stderr).toBe(0);

    for (const from of [snapshot, source.url]) {
      const diff = await runCli(['diff', '--from', from, '--to', target.url, '--format', 'json'], { env });
      expect(diff.exitCode, diff.stdout).toBe(0);
      const result = JSON.parse(diff.stdout) as Record<string, unknown>;
      expect(result.changed).toEqual([]);
      expect(result.scanProfiles).toEqual({ added: [], removed: [], changed: [] });
    }

    const verify = await runCli(['verify', snapshot, '--env', target.url, '--format', 'json'], { env });
    expect(verify.exitCode, verify.stdout).toBe(0);

    const before = target.record.changes.length;
    const converge = await runCli(
      ['import', snapshot, '--to', target.url, '--on-conflict', 'update', '--prune', '--no-progress'],
      { env, cwd: dir },
    );
    expect(converge.exitCode, converge.stderr + converge.stdout).toBe(0);
    expect(target.record.changes.length, 'nothing written').toBe(before);
  });
});
