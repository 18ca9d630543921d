/**
 * `verify` of scan profiles (snapshot format 2) end to end: prod exported with its profiles, imported
 * with `--allow-run` into an empty target, verified (every profile present, `dataSourceList` compared by
 * connection names across different ids); then one profile deleted, one changed and one added in the
 * target: exactly those named, with the changed field, exit 1.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { runCli } from '../helpers/run-cli.js';
import { prepareImportSource, targetReferences } from './import.helpers.js';

const started: RunningEmulator[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((e) => e.close()));
});

async function call(emu: RunningEmulator, method: string, path: string, body?: unknown): Promise<void> {
  const res = await fetch(`${emu.url}/api/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${emu.token}`, 'Content-Type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
}

describe('verify: scan profiles', () => {
  it('present after a restore; then missing, different and extra profiles are named (exit 1)', async () => {
    const src = await prepareImportSource('dds-verify-profiles-');
    started.push(src.source);
    const target = await startEmulator({ data: { connections: [], ...targetReferences() } });
    started.push(target);
    const snapshot = join(src.dir, 'v2.snapshot.jsonl');
    const env = { ...src.secretEnv, DDS_SOURCE_TOKEN: src.source.token, DDS_TARGET_TOKEN: target.token };
    expect((await runCli(['export', '--from', src.source.url, '-o', snapshot], { env })).exitCode).toBe(0);
    const imported = await runCli(
      [
        'import',
        snapshot,
        '--to',
        target.url,
        '--overrides',
        src.overridesPath,
        '--allow-run',
        '--no-progress',
      ],
      { env },
    );
    expect(imported.exitCode, imported.stderr).toBe(0);
    const verifyEnv = { DDS_TOKEN: target.token };

    const ok = await runCli(['verify', snapshot, '--env', target.url, '--json'], { env: verifyEnv });
    const okResult = JSON.parse(ok.stdout);
    expect(okResult.scanProfiles, ok.stdout).toEqual({
      present: 4,
      different: 0,
      missing: 0,
      extra: 0,
      skipped: 0,
    });
    expect(ok.exitCode).toBe(0);

    // The target's profiles hold the target's ids: the comparison is by connection name.
    const profiles = target.store.profiles.map((p) => structuredClone(p) as Record<string, unknown>);
    const [gone, changed] = profiles.filter((p) => p.isSingleRunScan !== true);
    if (gone === undefined || changed === undefined) throw new Error('the fixture has too few profiles');
    await call(target, 'DELETE', `/scanProfiles/${String(gone._id)}`);
    const { _id, createdAt, updatedAt, ...rest } = changed;
    await call(target, 'PUT', `/scanProfiles/${String(_id)}`, {
      ...rest,
      schedule: { cronExpression: '0 5 * * *', timeZone: 'UTC' },
    });
    const { _id: _x, createdAt: _c, updatedAt: _u, ...copy } = changed;
    await call(target, 'POST', '/scanProfiles', {
      ...copy,
      name: 'Stray profile',
      schedule: { cronExpression: '0 6 * * *', timeZone: 'UTC' },
    });

    const run = await runCli(['verify', snapshot, '--env', target.url], { env: verifyEnv });
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain('  scan profiles: 2 present, 1 different, 1 missing, 1 extra');
    expect(run.stdout).toContain('  connections:   69 present, 0 different, 0 missing, 0 extra');
    expect(run.stdout).toContain(`  - scan profile ${String(gone.name)}`);
    expect(run.stdout).toContain(`  ~ scan profile ${String(changed.name)}\n      /schedule/cronExpression:`);
    expect(run.stdout).toContain('  + scan profile Stray profile');
  }, 60_000);

  it('a normal restore verifies (exit 0): --overrides compares the fields it sets; the one-time profile is skipped', async () => {
    const src = await prepareImportSource('dds-verify-overrides-', { all: { scanner_group: 'dr-scanners' } });
    started.push(src.source);
    const references = targetReferences();
    const target = await startEmulator({
      data: {
        connections: [],
        ...references,
        scanners: [...references.scanners, { name: 'dr-scanner-1', scanner_group: 'dr-scanners' }],
      },
    });
    started.push(target);
    const snapshot = join(src.dir, 'v2.snapshot.jsonl');
    const env = { ...src.secretEnv, DDS_SOURCE_TOKEN: src.source.token, DDS_TARGET_TOKEN: target.token };
    expect((await runCli(['export', '--from', src.source.url, '-o', snapshot], { env })).exitCode).toBe(0);
    const imported = await runCli(
      ['import', snapshot, '--to', target.url, '--overrides', src.overridesPath, '--no-progress'],
      { env },
    );
    expect(imported.exitCode, imported.stderr).toBe(0);
    expect(target.store.profiles.some((p) => p.isSingleRunScan === true)).toBe(false);

    // The shell that verifies holds no secret: secrets are never compared.
    const verifyEnv = { DDS_TOKEN: target.token };
    const run = await runCli(['verify', snapshot, '--env', target.url, '--overrides', src.overridesPath], {
      env: verifyEnv,
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain(': complete');
    expect(run.stdout).toContain('  scan profiles: 3 present, 0 different, 0 missing, 0 extra, 1 skipped');
    expect(run.stdout).toMatch(
      /Skipped .*\n {2}- scan profile One-time PCI sweep - S3: one-time profile \(isSingleRunScan\): import skips it/,
    );
    for (const value of Object.values(src.secretEnv)) expect(run.stdout + run.stderr).not.toContain(value);

    // Without the overrides, the field they set differs on every connection.
    const plain = await runCli(['verify', snapshot, '--env', target.url, '--json'], { env: verifyEnv });
    expect(plain.exitCode).toBe(1);
    const result = JSON.parse(plain.stdout);
    expect(result.connections.different).toBe(69);
    expect(result.items[0].fields.map((f: { path: string }) => f.path)).toContain('/scanner_group');

    // A connection whose overridden field drifts is named.
    const drifted = target.store.connections[0];
    if (drifted === undefined) throw new Error('empty target');
    await call(target, 'PUT', `/ds_connections/${encodeURIComponent(drifted.name)}`, {
      ds_connection: { ...drifted, scanner_group: 'default' },
    });
    const again = await runCli(['verify', snapshot, '--env', target.url, '--overrides', src.overridesPath], {
      env: verifyEnv,
    });
    expect(again.exitCode).toBe(1);
    expect(again.stdout).toContain(`/scanner_group: "dr-scanners" -> "default"`);
  }, 60_000);
});
