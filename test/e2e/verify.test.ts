/**
 * `verify` end to end: the CLI in-process against emulators on loopback. A snapshot of "prod" is
 * checked against a complete restore, a damaged one (two removed, one changed, one extra), and with
 * `--test-connections` against per-connection test outcomes set in the emulator.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/index.js';
import type { RunningEmulator, SeedConnection } from '../../src/emulator/types.js';
import { clearRegisteredSecrets } from '../../src/secrets.js';
import { createSnapshotHeader } from '../../src/snapshot/format.js';
import { writeSnapshot } from '../../src/snapshot/write.js';
import { type CliRun, runCli } from '../helpers/run-cli.js';
import { makeTempDirSync } from '../helpers/temp-dir.js';

const SECRETS = [
  'Verify-Hr-Pass-1111',
  'AKIAVERIFYKEY00001',
  'verify-aws-secret-2222',
  'Verify-Pay-Pass-3333',
];

/** The production connections; `connectionStatusTest` is what prod recorded of each source's last test. */
function prodConnections(): SeedConnection[] {
  const ok = { connectionStatusTest: { is_success: true, last_connection: '2026-11-20T10:00:00.000Z' } };
  return [
    {
      ...ok,
      name: 'hr-mysql',
      type: 'rdb-mysql',
      rdb_url: 'mysql://hr:3306',
      username: 'scanner',
      password: SECRETS[0],
      enabled: 'yes',
    },
    {
      ...ok,
      name: 'logs-s3',
      type: 's3',
      bucket_name: 'logs',
      aws_region: 'eu-west-1',
      isCredentialsAuth: true,
      aws_access_key: SECRETS[1],
      aws_secret_key: SECRETS[2],
    },
    { ...ok, name: 'fin-s3', type: 's3', bucket_name: 'fin', scanner_group: 'default', security_tier: '1' },
    { ...ok, name: 'crm-sf', type: 'salesforce', enabled: 'yes' },
    {
      // Already broken in production: its last test failed.
      connectionStatusTest: { is_success: false, last_connection: '2026-11-20T10:00:00.000Z' },
      name: 'legacy-db',
      type: 'rdb-mysql',
      rdb_url: 'mysql://legacy',
      username: 'old',
    },
    {
      ...ok,
      name: 'pay-mysql',
      type: 'rdb-mysql',
      rdb_url: 'mysql://pay',
      username: 'pay',
      password: SECRETS[3],
    },
  ];
}

/** What a restore holds: the same configuration, new ids, no recorded test. */
function restored(connections: SeedConnection[]): SeedConnection[] {
  return connections.map((c, i) => {
    const { connectionStatusTest: _dropped, ...rest } = c;
    return { ...rest, _id: `bb${String(i + 1).padStart(22, '0')}`, created_at: '2026-11-23T09:00:00.000Z' };
  });
}

let complete: RunningEmulator;
let damaged: RunningEmulator;
let dir: string;
let snapshot: string;
const env = { DDS_TOKEN: 'verify-token' };

beforeAll(async () => {
  dir = makeTempDirSync('dds-verify-e2e-');
  snapshot = join(dir, 'prod.snapshot.jsonl');
  const prod = prodConnections().map((c, i) => ({ ...c, _id: `aa${String(i + 1).padStart(22, '0')}` }));
  await writeSnapshot(
    { path: snapshot },
    createSnapshotHeader({
      tool: 'dds-migrate test',
      source: { url: 'https://prod.example.com', environment: 'prod' },
    }),
    prod,
  );
  complete = await startEmulator({
    data: { connections: restored(prodConnections()) },
    token: 'verify-token',
  });
  // Two removed (crm-sf, pay-mysql), one changed (fin-s3: scanner_group), one extra (stray-s3).
  const broken = restored(prodConnections())
    .filter((c) => c.name !== 'crm-sf' && c.name !== 'pay-mysql')
    .map((c) => (c.name === 'fin-s3' ? { ...c, scanner_group: 'dr-scanners' } : c));
  broken.push({ name: 'stray-s3', type: 's3', bucket_name: 'stray' });
  damaged = await startEmulator({ data: { connections: broken }, token: 'verify-token' });
});

afterAll(async () => {
  await Promise.all([complete?.close(), damaged?.close()]);
});

beforeEach(() => {
  clearRegisteredSecrets();
  complete.setTestFailures([]);
  damaged.setTestFailures([]);
});

/** Requests that could change something: anything but a GET and the connection tests. */
function writesOf(emulator: RunningEmulator) {
  return emulator.record.requests.filter(
    (r) => r.method !== 'GET' && !r.path.endsWith('/ds-connection-test'),
  );
}

function testRequestsOf(emulator: RunningEmulator) {
  return emulator.record.requests.filter(
    (r) => r.method === 'POST' && r.path.endsWith('/ds-connection-test'),
  );
}

function expectNoSecret(run: CliRun, extra = ''): void {
  for (const secret of [...SECRETS, 'verify-token']) {
    expect(run.stdout + run.stderr + extra, 'a secret or token leaked').not.toContain(secret);
  }
}

describe('verify SNAPSHOT --env E', () => {
  it('a complete restore verifies with exit 0, sending no write', async () => {
    const before = complete.record.requests.length;
    const run = await runCli(['verify', snapshot, '--env', complete.url], { env });
    expect(run.exitCode).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe(`Verify of ${complete.url.replace('http://', '')} against ${snapshot}: complete`);
    expect(lines[1]).toBe('  connections:   6 present, 0 different, 0 missing, 0 extra');
    expect(run.stdout).not.toMatch(/Missing|Different|Extra/);
    expect(writesOf(complete)).toEqual([]);
    expect(testRequestsOf(complete)).toEqual([]);
    expect(complete.record.requests.length).toBeGreaterThan(before);
    expectNoSecret(run);
  });

  it('two removed, one changed and one extra: exit 1, exactly those named, with the changed field', async () => {
    const report = join(dir, 'damaged.jsonl');
    const run = await runCli(['verify', snapshot, '--env', damaged.url, '--report', report], { env });
    expect(run.exitCode).toBe(1);
    expect(run.stdout.split('\n')[0]).toContain('NOT COMPLETE');
    expect(run.stdout).toContain('  connections:   3 present, 1 different, 2 missing, 1 extra');
    expect(run.stdout).toContain('  - crm-sf (salesforce)\n  - pay-mysql (rdb-mysql)');
    expect(run.stdout).toContain('  ~ fin-s3 (s3)\n      /scanner_group: "default" -> "dr-scanners"');
    expect(run.stdout).toContain('  + stray-s3 (s3)');

    const lines = readFileSync(report, 'utf8').trimEnd().split('\n');
    const items = lines.map((l) => JSON.parse(l) as { name: string; state: string; object: string });
    expect(items.map((i) => [i.name, i.state])).toEqual([
      ['crm-sf', 'missing'],
      ['fin-s3', 'different'],
      ['hr-mysql', 'present'],
      ['legacy-db', 'present'],
      ['logs-s3', 'present'],
      ['pay-mysql', 'missing'],
      ['stray-s3', 'extra'],
    ]);
    expect(items.every((i) => i.object === 'connection')).toBe(true);
    expect(items[1]).toMatchObject({
      fields: [{ path: '/scanner_group', from: 'default', to: 'dr-scanners' }],
    });
    expect(statSync(report).mode & 0o777).toBe(0o600);
    expect(writesOf(damaged)).toEqual([]);
    expectNoSecret(run, readFileSync(report, 'utf8'));
  });

  it('--format json holds the same verdicts for machines', async () => {
    const run = await runCli(['verify', snapshot, '--env', damaged.url, '--format', 'json'], { env });
    expect(run.exitCode).toBe(1);
    const result = JSON.parse(run.stdout);
    expect(result).toMatchObject({
      ok: false,
      complete: false,
      connections: { present: 3, different: 1, missing: 2, extra: 1, skipped: 0 },
      tests: null,
      regressions: [],
    });
    const json = await runCli(['verify', snapshot, '--env', complete.url, '--json'], { env });
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, complete: true });
  });

  it('only extra connections: still complete, exit 0 (named in the details)', async () => {
    const extra = await startEmulator({
      data: {
        connections: [...restored(prodConnections()), { name: 'stray-s3', type: 's3', bucket_name: 'x' }],
      },
      token: 'verify-token',
    });
    try {
      const run = await runCli(['verify', snapshot, '--env', extra.url], { env });
      expect(run.exitCode).toBe(0);
      expect(run.stdout).toContain('6 present, 0 different, 0 missing, 1 extra');
      expect(run.stdout).toContain('  + stray-s3 (s3)');
    } finally {
      await extra.close();
    }
  });

  it('a damaged snapshot is refused (exit 2) before anything is sent', async () => {
    const bad = join(dir, 'bad.snapshot.jsonl');
    writeFileSync(bad, readFileSync(snapshot, 'utf8').replace('"fin"', '"fix"'));
    const before = complete.record.requests.length;
    const run = await runCli(['verify', bad, '--env', complete.url], { env });
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe('');
    expect(complete.record.requests.length).toBe(before);
  });

  it('--rate without --test-connections is a usage error', async () => {
    const run = await runCli(['verify', snapshot, '--env', complete.url, '--rate', '5'], { env });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('--test-connections');
  });
});

describe('verify --test-connections', () => {
  it('all pass: exit 0, one test request per present connection, stored secret used', async () => {
    const before = testRequestsOf(complete).length;
    const changesBefore = complete.record.changes.length;
    const run = await runCli(
      ['verify', snapshot, '--env', complete.url, '--test-connections', '--rate', '100'],
      {
        env,
      },
    );
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('  tests:         6 passed, 0 regression, 0 known-bad');
    expect(testRequestsOf(complete).length - before).toBe(6);
    const tested = complete.record.changes.slice(changesBefore);
    expect(tested.every((c) => c.op === 'test')).toBe(true);
    expect(tested.map((c) => c.name).sort()).toEqual([
      'crm-sf',
      'fin-s3',
      'hr-mysql',
      'legacy-db',
      'logs-s3',
      'pay-mysql',
    ]);
    expect(writesOf(complete)).toEqual([]);
    expectNoSecret(run);
  });

  it('a source that passed at export and fails now is a regression: exit 1, named in the summary', async () => {
    complete.setTestFailures(['hr-mysql']);
    const report = join(dir, 'regression.jsonl');
    const run = await runCli(
      ['verify', snapshot, '--env', complete.url, '--test-connections', '--rate', '100', '--report', report],
      { env },
    );
    expect(run.exitCode).toBe(1);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe(
      `Verify of ${complete.url.replace('http://', '')} against ${snapshot}: complete, 1 REGRESSION`,
    );
    expect(run.stdout).toContain('  tests:         5 passed, 1 regression, 0 known-bad');
    expect(run.stdout).toContain('  regressions:   hr-mysql');
    expect(run.stdout).toMatch(/! hr-mysql \(rdb-mysql\): REGRESSION/);
    const hr = readFileSync(report, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((i: { name: string }) => i.name === 'hr-mysql');
    expect(hr).toMatchObject({ state: 'present', test: { kind: 'regression' } });
    expectNoSecret(run, readFileSync(report, 'utf8'));
  });

  it('a source that was already failing is known-bad: exit 0 when nothing else is wrong', async () => {
    complete.setTestFailures(['legacy-db']);
    const run = await runCli(
      ['verify', snapshot, '--env', complete.url, '--test-connections', '--rate', '100', '--json'],
      { env },
    );
    expect(run.exitCode).toBe(0);
    const result = JSON.parse(run.stdout);
    expect(result.tests).toEqual({ passed: 5, regression: 0, 'known-bad': 1, unknown: 0, error: 0 });
    expect(result.items.find((i: { name: string }) => i.name === 'legacy-db').test).toMatchObject({
      kind: 'known-bad',
      recorded: 'failed',
    });
  });

  it('tests only the present connections of a damaged restore: one request each, none for the others', async () => {
    const before = testRequestsOf(damaged).length;
    const changesBefore = damaged.record.changes.length;
    const run = await runCli(
      ['verify', snapshot, '--env', damaged.url, '--test-connections', '--rate', '100'],
      {
        env,
      },
    );
    expect(run.exitCode).toBe(1);
    expect(testRequestsOf(damaged).length - before).toBe(3);
    expect(
      damaged.record.changes
        .slice(changesBefore)
        .map((c) => c.name)
        .sort(),
    ).toEqual(['hr-mysql', 'legacy-db', 'logs-s3']);
    expect(writesOf(damaged)).toEqual([]);
  });

  it('draws a progress bar on a TTY and clears it', async () => {
    const run = await runCli(
      ['verify', snapshot, '--env', complete.url, '--test-connections', '--rate', '100'],
      {
        env,
        tty: true,
      },
    );
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toMatch(/tests \|/);
    expect(run.stdout).not.toMatch(/tests \|/);
  });
});
