/**
 * `diff` end to end: the CLI in-process against two emulators on loopback (and snapshot files).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/index.js';
import type { EmulatorSeed, RunningEmulator, SeedConnection } from '../../src/emulator/types.js';
import { createSnapshotHeader } from '../../src/snapshot/format.js';
import { writeSnapshot } from '../../src/snapshot/write.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDirSync } from '../helpers/temp-dir.js';

/** Every secret value seeded below: none may appear in any output. */
const SECRETS = [
  'From-Hr-Pass-111',
  'From-Pay-Pass-222',
  'To-Pay-Pass-333',
  'AKIAFROMKEY0001',
  'from-aws-secret-0001',
  'From-Added-Pass-444',
  'To-Removed-Pass-555',
  'enc-from-custom-666',
  'enc-to-custom-777',
];

/** Connections both sides share; `side` varies only what the server manages. */
function shared(side: 'from' | 'to'): SeedConnection[] {
  const ts = side === 'from' ? '2024-01-01T00:00:00.000Z' : '2026-11-22T10:00:00.000Z';
  const managed = (n: number) => ({
    _id: `${side === 'from' ? 'aa' : 'bb'}${String(n).padStart(22, '0')}`,
    created_at: ts,
    updated_at: ts,
    last_scan_at: ts,
    connectionStatusTest: { is_success: side === 'from' },
  });
  return [
    {
      ...managed(1),
      name: 'hr-mysql',
      type: 'rdb-mysql',
      rdb_url: 'mysql://hr:3306',
      username: 'scanner',
      password: 'From-Hr-Pass-111',
      enabled: 'yes',
    },
    {
      ...managed(2),
      name: 'logs-s3',
      type: 's3',
      bucket_name: 'logs',
      aws_region: 'eu-west-1',
      isCredentialsAuth: true,
      aws_access_key: 'AKIAFROMKEY0001',
      aws_secret_key: 'from-aws-secret-0001',
      owners_v2:
        side === 'from'
          ? [
              { id: 'a@example.com', type: 'businessOwner', origin: 'manual' },
              { id: 'b@example.com', type: 'itOwner', origin: 'manual' },
            ]
          : [
              { id: 'b@example.com', type: 'itOwner', origin: 'manual' },
              { id: 'a@example.com', type: 'businessOwner', origin: 'manual' },
            ],
    },
    {
      ...managed(3),
      name: 'crm-sf',
      type: 'salesforce',
      enabled: 'yes',
      custom_fields: [
        {
          field_name: 'api_key_ref',
          field_value: side === 'from' ? 'enc-from-custom-666' : 'enc-to-custom-777',
          field_type: 'encrypted',
        },
      ],
    },
    {
      ...managed(4),
      name: 'fin-s3',
      type: 's3',
      bucket_name: 'fin',
      scanner_group: side === 'from' ? 'default' : 'dr-scanners',
      security_tier: '1',
    },
    {
      ...managed(5),
      name: 'etl-pg',
      type: 'rdb-postgresql',
      rdb_url: 'postgresql://etl:5432',
      username: 'etl',
      custom_fields: [
        { field_name: 'cost_center', field_value: side === 'from' ? 'CC-1' : 'CC-2', field_type: 'clear' },
      ],
    },
    {
      ...managed(6),
      name: 'pay-mysql',
      type: 'rdb-mysql',
      rdb_url: 'mysql://pay',
      username: 'pay',
      password: side === 'from' ? 'From-Pay-Pass-222' : 'To-Pay-Pass-333',
    },
  ];
}

function seedOf(side: 'from' | 'to'): EmulatorSeed {
  const connections = shared(side);
  if (side === 'from') {
    connections.push(
      {
        name: 'added-one',
        type: 'rdb-mysql',
        rdb_url: 'mysql://new',
        username: 'u',
        password: 'From-Added-Pass-444',
      },
      { name: 'added-two', type: 's3', bucket_name: 'new-bucket' },
    );
  } else {
    connections.push({
      name: 'removed-one',
      type: 'rdb-mysql',
      rdb_url: 'mysql://old',
      username: 'u',
      password: 'To-Removed-Pass-555',
    });
  }
  return { connections };
}

function expectNoSecret(text: string): void {
  for (const secret of SECRETS) expect(text).not.toContain(secret);
}

describe('diff against two emulators', () => {
  let from: RunningEmulator;
  let to: RunningEmulator;
  let same: RunningEmulator;
  let dir: string;

  beforeAll(async () => {
    // Credentials stored in the clear: the export shows them, so a changed secret can be seen (masked).
    from = await startEmulator({ data: seedOf('from'), token: 'from-token', exportClearSecrets: true });
    to = await startEmulator({ data: seedOf('to'), token: 'to-token', exportClearSecrets: true });
    same = await startEmulator({ data: seedOf('from'), token: 'same-token', exportClearSecrets: true });
    dir = makeTempDirSync('dds-diff-e2e-');
  });

  afterAll(async () => {
    await Promise.all([from?.close(), to?.close(), same?.close()]);
  });

  /** A snapshot of the `from` emulator's data as stored (clear secrets, its own _ids). */
  const writeFromSnapshot = (path: string) =>
    writeSnapshot(
      { path },
      createSnapshotHeader({ tool: 'dds-migrate test', source: { url: from.url, environment: 'from' } }),
      from.store.connections,
    );

  const env = () => ({ DDS_SOURCE_TOKEN: 'from-token', DDS_TARGET_TOKEN: 'to-token' });

  it('reports exactly the added, removed and changed connections, exit 1, no secret anywhere', async () => {
    const run = await runCli(['diff', '--from', from.url, '--to', to.url, '--format', 'json'], {
      env: env(),
    });
    expect(run.stderr).not.toContain('error');
    expect(run.exitCode).toBe(1);
    const result = JSON.parse(run.stdout);
    // The contract's shape: both sides' labels come first.
    expect(Object.keys(result).slice(0, 2)).toEqual(['from', 'to']);
    expect(result.from).toBe(`${new URL(from.url).host} (environment)`);
    expect(result.to).toBe(`${new URL(to.url).host} (environment)`);
    expect(result.added).toEqual(['added-one', 'added-two']);
    expect(result.removed).toEqual(['removed-one']);
    expect(result.changed.map((c: { name: string }) => c.name)).toEqual([
      'crm-sf',
      'etl-pg',
      'fin-s3',
      'pay-mysql',
    ]);
    expect(result.changed).toContainEqual({
      name: 'pay-mysql',
      fields: [{ path: '/password', from: '******', to: '******' }],
    });
    expect(result.changed).toContainEqual({
      name: 'fin-s3',
      fields: [{ path: '/scanner_group', from: 'default', to: 'dr-scanners' }],
    });
    expect(result.unchanged).toBe(2);
    expect(result.uncomparable).toEqual([]);
    expectNoSecret(run.stdout + run.stderr);
  });

  it('prints a plan in text form', async () => {
    const run = await runCli(['diff', '--from', from.url, '--to', to.url], { env: env() });
    expect(run.exitCode).toBe(1);
    const lines = run.stdout.trimEnd().split('\n');
    expect(lines).toContain('+ added-one (rdb-mysql)');
    expect(lines).toContain('- removed-one (rdb-mysql)');
    expect(lines).toContain('~ fin-s3 (s3)');
    expect(lines).toContain('    /scanner_group: "default" -> "dr-scanners"');
    expect(lines.at(-1)).toBe('connections: 2 added, 1 removed, 4 changed, 2 unchanged');
    expect(run.stdout).not.toContain('\u001b[');
    expectNoSecret(run.stdout + run.stderr);
  });

  it('colours the plan only on a terminal', async () => {
    const run = await runCli(['diff', '--from', from.url, '--to', to.url], { env: env(), tty: true });
    expect(run.stdout).toContain('\u001b[32m+ added-one');
  });

  it('same data on both sides: exit 0 and "no differences"', async () => {
    const run = await runCli(['diff', '--from', from.url, '--to', same.url], {
      env: { DDS_SOURCE_TOKEN: 'from-token', DDS_TARGET_TOKEN: 'same-token' },
    });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('no differences');
    const json = await runCli(['diff', '--from', from.url, '--to', same.url, '--json'], {
      env: { DDS_SOURCE_TOKEN: 'from-token', DDS_TARGET_TOKEN: 'same-token' },
    });
    expect(json.exitCode).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      from: `${new URL(from.url).host} (environment)`,
      to: `${new URL(same.url).host} (environment)`,
      added: [],
      removed: [],
      changed: [],
      unchanged: 8,
      uncomparable: [],
    });
  });

  it('ignores fields given on the command line and in the config file', async () => {
    const config = join(dir, 'ignore.config.json');
    writeFileSync(
      config,
      JSON.stringify({
        environments: { a: { url: from.url, tokenEnv: 'A_TOKEN' }, b: { url: to.url, tokenEnv: 'B_TOKEN' } },
        diff: { ignoreFields: ['scanner_group'] },
      }),
    );
    const run = await runCli(
      [
        'diff',
        '--from',
        'a',
        '--to',
        'b',
        '--json',
        '--config',
        config,
        '--ignore-field',
        '/custom_fields/cost_center',
      ],
      { env: { A_TOKEN: 'from-token', B_TOKEN: 'to-token' } },
    );
    expect(run.stderr).not.toContain('error');
    expect(run.exitCode).toBe(1);
    expect(JSON.parse(run.stdout).changed.map((c: { name: string }) => c.name)).toEqual([
      'crm-sf',
      'pay-mysql',
    ]);
  });

  it('a snapshot against an environment', async () => {
    const snapshot = join(dir, 'from.snapshot.jsonl');
    await writeFromSnapshot(snapshot);
    const run = await runCli(['diff', '--from', snapshot, '--to', to.url, '--json'], { env: env() });
    expect(run.exitCode).toBe(1);
    const result = JSON.parse(run.stdout);
    expect(result.from).toBe('from.snapshot.jsonl (snapshot)');
    expect(result.to).toBe(`${new URL(to.url).host} (environment)`);
    expect(result.added).toEqual(['added-one', 'added-two']);
    expect(result.removed).toEqual(['removed-one']);
    const self = await runCli(['diff', '--from', snapshot, '--to', from.url], {
      env: { DDS_TARGET_TOKEN: 'from-token' },
    });
    expect(self.exitCode).toBe(0);
    expect(self.stdout).toContain('no differences');
  });

  it('a snapshot against an environment, either way round, finds what the two environments give', async () => {
    // The snapshot is read first and each exported connection compared with its twin read again from
    // the file; the export's order is not the snapshot's (name) order.
    const fromSnapshot = join(dir, 'from-either.snapshot.jsonl');
    await writeFromSnapshot(fromSnapshot);
    const toSnapshot = join(dir, 'to-either.snapshot.jsonl');
    await writeSnapshot(
      { path: toSnapshot },
      createSnapshotHeader({ tool: 'dds-migrate test', source: { url: to.url, environment: 'to' } }),
      [...to.store.connections].reverse(),
    );
    const pick = (stdout: string) => {
      const r = JSON.parse(stdout);
      return {
        added: r.added,
        removed: r.removed,
        changed: r.changed,
        unchanged: r.unchanged,
        uncomparable: r.uncomparable,
      };
    };
    const both = await runCli(['diff', '--from', from.url, '--to', to.url, '--json'], { env: env() });
    const snapshotFirst = await runCli(['diff', '--from', fromSnapshot, '--to', to.url, '--json'], {
      env: env(),
    });
    const snapshotSecond = await runCli(['diff', '--from', from.url, '--to', toSnapshot, '--json'], {
      env: env(),
    });
    expect(both.exitCode).toBe(1);
    expect(snapshotFirst.exitCode).toBe(1);
    expect(snapshotSecond.exitCode).toBe(1);
    expect(pick(snapshotFirst.stdout)).toEqual(pick(both.stdout));
    expect(pick(snapshotSecond.stdout)).toEqual(pick(both.stdout));
    // A snapshot side is labelled by its file name.
    expect(JSON.parse(snapshotFirst.stdout).from).toBe('from-either.snapshot.jsonl (snapshot)');
    expect(JSON.parse(snapshotSecond.stdout).to).toBe('to-either.snapshot.jsonl (snapshot)');
    expectNoSecret(snapshotFirst.stdout + snapshotSecond.stdout);
  });

  /** The `from` environment's snapshot at `name`, its line 3 no longer JSON. */
  async function writeDamagedSnapshot(name: string): Promise<string> {
    const snapshot = join(dir, name);
    await writeFromSnapshot(snapshot);
    const lines = readFileSync(snapshot, 'utf8').split('\n');
    lines[2] = lines[2]!.replace('"', "'");
    writeFileSync(snapshot, lines.join('\n'));
    return snapshot;
  }

  it('a damaged snapshot exits 2 before anything is printed', async () => {
    const snapshot = await writeDamagedSnapshot('damaged.snapshot.jsonl');
    const run = await runCli(['diff', '--from', snapshot, '--to', to.url], { env: env() });
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^error: .*damaged\.snapshot\.jsonl:3/m);
  });

  it('a damaged snapshot is the error reported, also when the environment cannot be reached', async () => {
    const snapshot = await writeDamagedSnapshot('damaged-dead.snapshot.jsonl');
    // Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
    const run = await runCli(['diff', '--from', 'http://127.0.0.1:9', '--to', snapshot], { env: env() });
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^error: .*damaged-dead\.snapshot\.jsonl:3/m);
  });

  it('--schemas: a field its template marks x-secret is shown masked', async () => {
    const schemas = join(dir, 'schemas');
    mkdirSync(schemas);
    writeFileSync(
      join(schemas, 's3.schema.json'),
      JSON.stringify({
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        properties: { scanner_group: { type: 'string', 'x-secret': true } },
      }),
    );
    const run = await runCli(['diff', '--from', from.url, '--to', to.url, '--json', '--schemas', schemas], {
      env: env(),
    });
    expect(run.exitCode).toBe(1);
    expect(JSON.parse(run.stdout).changed).toContainEqual({
      name: 'fin-s3',
      fields: [{ path: '/scanner_group', from: '******', to: '******' }],
    });
    expect(run.stdout).not.toContain('dr-scanners');
  });

  it('a missing snapshot file exits 2', async () => {
    const run = await runCli(['diff', '--from', join(dir, 'nope.snapshot.jsonl'), '--to', to.url], {
      env: env(),
    });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('no such snapshot file');
  });

  it('a bad --ignore-field exits 2', async () => {
    const run = await runCli(['diff', '--from', from.url, '--to', to.url, '--ignore-field', 'a/b'], {
      env: env(),
    });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('Expected --ignore-field');
  });

  it('an unreachable service exits 5', async () => {
    const closed = await startEmulator({});
    const url = closed.url;
    await closed.close();
    const run = await runCli(['diff', '--from', url, '--to', to.url], { env: env() });
    expect(run.exitCode).toBe(5);
    expect(run.stdout).toBe('');
  });

  it('a wrong token exits 4 and is not printed', async () => {
    const run = await runCli(['diff', '--from', from.url, '--to', to.url], {
      env: { DDS_SOURCE_TOKEN: 'from-token', DDS_TARGET_TOKEN: 'wrong-token-canary' },
    });
    expect(run.exitCode).toBe(4);
    expect(run.stdout + run.stderr).not.toContain('wrong-token-canary');
  });
});

describe('diff when the service masks secrets', () => {
  it('lists a secret it cannot see as not comparable, not as changed', async () => {
    const from = await startEmulator({ data: seedOf('from'), token: 'from-token' });
    const to = await startEmulator({ data: seedOf('to'), token: 'to-token' });
    try {
      const run = await runCli(['diff', '--from', from.url, '--to', to.url, '--json'], {
        env: { DDS_SOURCE_TOKEN: 'from-token', DDS_TARGET_TOKEN: 'to-token' },
      });
      expect(run.exitCode).toBe(1);
      const result = JSON.parse(run.stdout);
      expect(result.changed.map((c: { name: string }) => c.name)).toEqual(['etl-pg', 'fin-s3']);
      expect(result.uncomparable).toContainEqual({ name: 'pay-mysql', path: '/password' });
      expect(result.uncomparable).toContainEqual({
        name: 'crm-sf',
        path: '/custom_fields/api_key_ref/field_value',
      });
      expectNoSecret(run.stdout + run.stderr);
    } finally {
      await Promise.all([from.close(), to.close()]);
    }
  });
});
