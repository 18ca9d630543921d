/**
 * The secrets audit as a test: distinctive canary credentials (passwords, AWS keys, an encrypted custom
 * field, a GCP private key, a passphrase, a nested credential) and canary tokens (an API token, a user
 * token exchanged through `refreshTokenEnv`) are seeded into emulators that export secrets in the
 * clear. Every command except import then runs at `--log-level trace --log-file F`, and no canary may
 * appear in stdout, stderr, a log file or any file written, except the snapshot itself (which holds
 * what the export gave, and is 0600). Every file a run writes is 0600.
 *
 * The registry of known secrets is process-wide: it is cleared before every run, so each run is judged
 * on what it registers itself, not on what an earlier run left behind.
 */
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EmulatorSeed, type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { clearRegisteredSecrets, MASK } from '../../src/secrets.js';
import { type CliRun, runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** Every canary holds this marker, and nothing else the tests print does. */
const MARK = 'CANARY';
const TOKEN = 'CANARY-api-token-7d41f09e';
const USER_TOKEN = 'CANARY-user-token-2b8c5a11';
const WRONG_TOKEN = 'CANARY-wrong-token-90aa13';
/** The JWT header every emulator session token starts with (`{"alg":"HS256","typ":"JWT"}`). */
const SESSION_TOKEN_PREFIX = 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9';

/** The canary credentials of one side (`a` or `b`), distinct per side so the diff sees changed secrets. */
function secretsOf(side: string) {
  return {
    mysql: `CANARY-${side}-mysql-pw-51e0`,
    awsKey: `AKIACANARY${side.toUpperCase()}0EXAMPLE`,
    awsSecret: `CANARY-${side}-aws/secret+key-9f3c`,
    pin: `CANARY-${side}-encrypted-pin-4431`,
    gcp: `-----BEGIN PRIVATE KEY-----\nMIIE-CANARY-${side}-gcp-key-77aa\n-----END PRIVATE KEY-----\n`,
    snowflake: `CANARY-${side}-snowflake-pw-0c2d`,
    passphrase: `CANARY-${side}-passphrase-c0ffee`,
    nested: `CANARY-${side}-nested-client-secret-8e1b`,
  };
}

function seedOf(side: 'a' | 'b'): EmulatorSeed {
  const s = secretsOf(side);
  const common = { enabled: 'yes', scanner_group: 'eu-scanners', security_tier: '2' };
  return {
    connections: [
      {
        _id: `${side === 'a' ? '65' : '75'}a1f0c0e4b0a1b2c3d40001`,
        name: 'canary-mysql',
        type: 'rdb-mysql',
        ...common,
        rdb_url: 'mysql://db.example.com:3306',
        rdb_name: 'sales',
        username: 'scanner',
        password: s.mysql,
      },
      {
        _id: `${side === 'a' ? '65' : '75'}a1f0c0e4b0a1b2c3d40002`,
        name: 'canary-s3',
        type: 's3',
        ...common,
        bucket_name: 'acme-canary',
        aws_region: 'eu-central-1',
        isCredentialsAuth: true,
        isIamRoleAuth: false,
        aws_access_key: s.awsKey,
        aws_secret_key: s.awsSecret,
        custom_fields: [
          { field_name: 'cost_center', field_value: 'CC-1', field_type: 'clear' },
          { field_name: 'break_glass_pin', field_value: s.pin, field_type: 'encrypted' },
        ],
      },
      {
        _id: `${side === 'a' ? '65' : '75'}a1f0c0e4b0a1b2c3d40003`,
        name: 'canary-bq',
        type: 'gcp-big-query',
        ...common,
        gcp_project_id: 'acme-canary',
        gcp_client_email: 'scanner@acme-canary.iam.gserviceaccount.com',
        gcp_private_key: s.gcp,
        gcp_location: 'EU',
      },
      {
        _id: `${side === 'a' ? '65' : '75'}a1f0c0e4b0a1b2c3d40004`,
        name: 'canary-snowflake',
        type: 'snowflake',
        ...common,
        account: 'acme',
        warehouse: 'WH',
        database: 'DB',
        username: 'scanner',
        password: s.snowflake,
        passphrase: s.passphrase,
        auth: { method: 'oauth', client_secret: s.nested },
      },
      ...(side === 'b'
        ? [
            {
              _id: '75a1f0c0e4b0a1b2c3d40005',
              name: 'canary-only-b',
              type: 'rdb-mysql',
              ...common,
              password: 'CANARY-b-only-pw-1111',
            },
          ]
        : []),
    ],
    // Only on `a`: `profiles clone` copies it to `b`.
    scanProfiles:
      side === 'b'
        ? []
        : [
            {
              _id: '66b2a0d1c3e4f5a6b7c8d901',
              name: 'Nightly canary',
              dataSourceList: [`${side === 'a' ? '65' : '75'}a1f0c0e4b0a1b2c3d40001`],
              scanTemplateId: '64b7f0c2a1d3e4f5a6b7c803',
              schedule: { cronExpression: '0 2 * * *', timeZone: 'UTC' },
              active: true,
            },
          ],
    cases: [1, 2, 3].map((i) => ({
      id: `67c3b1e2000000000000000${i}`,
      caseLabel: `case ${i}`,
      policyName: 'PII',
      severityLevel: 'high',
      dataSourceName: 'canary-mysql',
      dataSourceType: 'rdb-mysql',
      caseStatus: 'open',
      assignee: 'alice@example.com',
    })),
  };
}

let a: RunningEmulator;
let b: RunningEmulator;
let deadUrl: string;
let dir: string;
let snapshot: string;
/** Files the test itself wrote (inputs), excluded from the "every file written is 0600" check. */
const inputs = new Set<string>();
let logCounter = 0;

interface TracedRun extends CliRun {
  readonly log: string;
  readonly logFile: string;
}

/** Run the CLI at trace level with a fresh log file, after forgetting every registered secret. */
async function traced(argv: readonly string[], env: Record<string, string>): Promise<TracedRun> {
  clearRegisteredSecrets();
  logCounter += 1;
  const logFile = join(dir, `run-${logCounter}.log`);
  const run = await runCli([...argv, '--log-level', 'trace', '--log-file', logFile], { env, cwd: dir });
  const log = await readFile(logFile, 'utf8').catch(() => '');
  return { ...run, log, logFile };
}

/** No canary, no session token, no Authorization value in anything a run printed or logged. */
function expectClean(run: TracedRun, options: { readonly logs?: boolean } = {}): void {
  // Empty text passes every "does not contain" below: a run that talks to a service must have logged
  // (only offline commands and errors found before any request may leave the log empty), and every run
  // must have printed something.
  if (options.logs ?? true) expect(run.log, `${run.logFile} is empty or missing`).not.toBe('');
  expect(run.stdout + run.stderr, 'the run printed nothing').not.toBe('');
  for (const [where, text] of [
    ['stdout', run.stdout],
    ['stderr', run.stderr],
    ['log file', run.log],
  ] as const) {
    expect(text, `${where} holds a canary`).not.toContain(MARK);
    expect(text, `${where} holds a session token`).not.toContain(SESSION_TOKEN_PREFIX);
    expect(text, `${where} holds an Authorization value`).not.toMatch(/Bearer\s+[A-Za-z0-9]/);
  }
}

const envA = () => ({ DDS_TOKEN: TOKEN, DDS_SOURCE_TOKEN: TOKEN, DDS_TARGET_TOKEN: TOKEN });

beforeAll(async () => {
  dir = await makeTempDir('dds-secrets-canary-');
  a = await startEmulator({
    port: 0,
    data: seedOf('a'),
    token: TOKEN,
    userToken: USER_TOKEN,
    exportClearSecrets: true,
  });
  b = await startEmulator({ port: 0, data: seedOf('b'), token: TOKEN, exportClearSecrets: true });
  const dead = await startEmulator({ port: 0, token: TOKEN });
  deadUrl = dead.url;
  await dead.close();
  const config = join(dir, 'dds-migrate.config.json');
  await writeFile(
    config,
    JSON.stringify({
      environments: {
        canary: { url: a.url, refreshTokenEnv: 'DDS_A_USER_TOKEN' },
        other: { url: b.url, tokenEnv: 'DDS_B_TOKEN' },
      },
    }),
  );
  inputs.add(config);
  // The snapshot several tests read is made here, not by the export test: each test stands on its own.
  snapshot = join(dir, 'a.snapshot.jsonl');
  const exported = await runCli(['export', '--from', a.url, '-o', snapshot], { env: envA(), cwd: dir });
  clearRegisteredSecrets();
  if (exported.exitCode !== 0) throw new Error(`set-up export failed: ${exported.stderr}`);
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  clearRegisteredSecrets();
});

// Not shuffled: the last test audits every file the earlier runs wrote, so it must run after them.
describe('no canary credential or token reaches any output', { shuffle: false }, () => {
  it('the emulators really hand out the canaries in the clear (so this test can fail)', async () => {
    const res = await fetch(`${a.url}/api/v1/ds-connections/file-download/export`, {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    const text = await res.text();
    expect(text).toContain(secretsOf('a').mysql);
    expect(text).toContain(secretsOf('a').passphrase);
    expect(text).toContain(secretsOf('a').nested);
  });

  it('export: the snapshot holds what the export gave, is 0600, and nothing else shows a canary', async () => {
    const exported = join(dir, 'export.snapshot.jsonl');
    const run = await traced(['export', '--from', a.url, '-o', exported], envA());
    expect(run.exitCode).toBe(0);
    expectClean(run);
    expect(run.log).toContain('"level":20');
    const text = await readFile(exported, 'utf8');
    expect(text).toContain(secretsOf('a').mysql);
    expect((await stat(exported)).mode & 0o777).toBe(0o600);

    const json = await traced(['export', '--from', a.url, '--out-dir', join(dir, 'out'), '--json'], envA());
    expect(json.exitCode).toBe(0);
    expectClean(json);
  });

  it.each(['table', 'json', 'ndjson', 'csv'])('connections list --format %s', async (format) => {
    const run = await traced(['connections', 'list', '--env', a.url, '--format', format], envA());
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('canary-snowflake');
    expectClean(run);
  });

  it('connections list through a user-token exchange (refreshTokenEnv) and a token file', async () => {
    const run = await traced(['connections', 'list', '--env', 'canary', '--format', 'json'], {
      DDS_A_USER_TOKEN: USER_TOKEN,
    });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain(MASK);
    expectClean(run);

    const tokenFile = join(dir, 'token.txt');
    await writeFile(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
    inputs.add(tokenFile);
    const viaFile = await traced(
      ['connections', 'list', '--env', a.url, '--token-file', tokenFile, '--format', 'ndjson'],
      {},
    );
    expect(viaFile.exitCode).toBe(0);
    expectClean(viaFile);
  });

  it('validate, as text and as --json, against shipped schemas and the environment templates', async () => {
    for (const extra of [[], ['--json'], ['--templates-from', a.url]]) {
      const run = await traced(['validate', snapshot, ...extra], envA());
      expect([0, 3]).toContain(run.exitCode);
      expectClean(run, { logs: extra[0] === '--templates-from' });
    }
  });

  it('diff between a clear-secrets snapshot and a clear-secrets environment, text and json', async () => {
    for (const [from, to] of [
      [snapshot, b.url],
      [a.url, b.url],
      [b.url, snapshot],
    ] as const) {
      for (const format of ['text', 'json']) {
        const run = await traced(['diff', '--from', from, '--to', to, '--format', format], envA());
        expect(run.exitCode).toBe(1);
        expect(run.stdout).toContain(MASK);
        expectClean(run);
        if (format === 'json') {
          const result = JSON.parse(run.stdout) as {
            changed: { name: string; fields: { path: string }[] }[];
          };
          const paths = result.changed.flatMap((c) => c.fields.map((f) => `${c.name}${f.path}`));
          // The canaries changed between the sides: the diff must see them, masked.
          expect(paths).toEqual(
            expect.arrayContaining(['canary-mysql/password', 'canary-s3/aws_secret_key']),
          );
        }
      }
    }
  });

  it('verify with connection tests, text and json, with a report', async () => {
    // Against its own source: every connection present, the clear secrets equal; tests run (one fails).
    a.setTestFailures(['canary-s3']);
    try {
      for (const format of ['text', 'json']) {
        const report = join(dir, `verify-${format}.jsonl`);
        const run = await traced(
          [
            'verify',
            snapshot,
            '--env',
            a.url,
            '--test-connections',
            '--rate',
            '100',
            '--format',
            format,
            '--report',
            report,
          ],
          envA(),
        );
        expect([0, 1]).toContain(run.exitCode);
        expectClean(run);
        const written = await readFile(report, 'utf8');
        expect(written).toContain('"state":"present"');
        expect(written, 'the report holds a canary').not.toContain(MARK);
      }
    } finally {
      a.setTestFailures([]);
    }
    // Against the other side: the canaries differ, so the verdict names the fields, masked.
    const other = await traced(['verify', snapshot, '--env', b.url, '--format', 'json'], envA());
    expect(other.exitCode).toBe(1);
    expectClean(other);
    expect(other.stdout).toContain(MASK);
    expect(other.stdout).toContain('/password');
  });

  it('profiles get, create and clone', async () => {
    const get = await traced(['profiles', 'get', '66b2a0d1c3e4f5a6b7c8d901', '--env', a.url], envA());
    expect(get.exitCode).toBe(0);
    expectClean(get);

    const file = join(dir, 'profile.json');
    await writeFile(
      file,
      JSON.stringify({
        name: 'Weekly canary',
        dataSourceList: ['canary-mysql'],
        scanTemplateId: '64b7f0c2a1d3e4f5a6b7c801',
        schedule: { cronExpression: '0 3 * * 1', timeZone: 'UTC' },
      }),
    );
    inputs.add(file);
    const create = await traced(['profiles', 'create', '--env', a.url, '--file', file], envA());
    expect(create.exitCode).toBe(0);
    expectClean(create);

    const clone = await traced(
      ['profiles', 'clone', '66b2a0d1c3e4f5a6b7c8d901', '--from', a.url, '--to', 'other'],
      { ...envA(), DDS_B_TOKEN: TOKEN },
    );
    expect(clone.exitCode, clone.stderr + clone.stdout).toBe(0);
    expectClean(clone);
  });

  it('cases list (stdout and -o), resolve, update with --audit', async () => {
    for (const format of ['table', 'json', 'ndjson', 'csv']) {
      const run = await traced(['cases', 'list', '--env', a.url, '--format', format], envA());
      expect(run.exitCode).toBe(0);
      expectClean(run);
    }
    const out = join(dir, 'cases.json');
    const toFile = await traced(['cases', 'list', '--env', a.url, '-o', out], envA());
    expect(toFile.exitCode).toBe(0);
    expectClean(toFile);

    const resolve = await traced(
      ['cases', 'resolve', '67c3b1e20000000000000001', '--env', a.url, '--reason', 'fixed'],
      envA(),
    );
    expect(resolve.exitCode).toBe(0);
    expectClean(resolve);

    const audit = join(dir, 'audit.jsonl');
    const update = await traced(
      [
        'cases',
        'update',
        '--env',
        a.url,
        '--where',
        'caseStatus=open',
        '--set',
        'assignee=bob@example.com',
        '--yes',
        '--audit',
        audit,
      ],
      envA(),
    );
    expect(update.exitCode).toBe(0);
    expectClean(update);
    expect(await readFile(audit, 'utf8')).toContain('"event":"updated"');
  });

  it('a rejected token (401) on every kind of command', async () => {
    const bad = { DDS_TOKEN: WRONG_TOKEN, DDS_SOURCE_TOKEN: WRONG_TOKEN, DDS_TARGET_TOKEN: WRONG_TOKEN };
    for (const argv of [
      ['connections', 'list', '--env', a.url, '--format', 'json'],
      ['export', '--from', a.url, '-o', join(dir, 'never.snapshot.jsonl')],
      ['diff', '--from', snapshot, '--to', a.url],
      ['validate', snapshot, '--templates-from', a.url],
      ['profiles', 'get', '66b2a0d1c3e4f5a6b7c8d901', '--env', a.url],
      ['cases', 'list', '--env', a.url, '--format', 'json'],
      ['verify', snapshot, '--env', a.url, '--test-connections'],
    ]) {
      const run = await traced(argv, bad);
      expect(run.exitCode, argv.join(' ')).toBe(4);
      expect(run.stderr).toMatch(/^error: /m);
      expectClean(run);
    }
    // A refused user token, through the config file.
    const user = await traced(['connections', 'list', '--env', 'canary'], { DDS_A_USER_TOKEN: WRONG_TOKEN });
    expect(user.exitCode).toBe(4);
    // The variable is named (never its value).
    expect(user.stderr).toContain('Check the user token in DDS_A_USER_TOKEN (refreshTokenEnv of canary)');
    expectClean(user);
  });

  it('a dead server', async () => {
    for (const argv of [
      ['connections', 'list', '--env', deadUrl],
      ['export', '--from', deadUrl, '-o', join(dir, 'never.snapshot.jsonl')],
      ['diff', '--from', snapshot, '--to', deadUrl, '--format', 'json'],
      ['verify', snapshot, '--env', deadUrl, '--test-connections'],
      ['cases', 'resolve', '67c3b1e20000000000000002', '--env', deadUrl, '--reason', 'x'],
    ]) {
      const run = await traced(argv, envA());
      expect(run.exitCode, argv.join(' ')).toBe(5);
      expectClean(run);
    }
  });

  it('a token that is not a token: the message names the variable, never the value', async () => {
    const run = await traced(['connections', 'list', '--env', a.url], { DDS_TOKEN: `${TOKEN} extra words` });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('DDS_TOKEN');
    expectClean(run, { logs: false });
  });

  it('a damaged snapshot line holding a clear secret is named, not quoted', async () => {
    const text = await readFile(snapshot, 'utf8');
    const damaged = join(dir, 'damaged.snapshot.jsonl');
    // Break the JSON right before the password value, so V8's parse error would quote it.
    await writeFile(
      damaged,
      text.replace(`"password":"${secretsOf('a').mysql}"`, `"password":${secretsOf('a').mysql}`),
      {
        mode: 0o600,
      },
    );
    inputs.add(damaged);
    for (const argv of [
      ['validate', damaged],
      ['diff', '--from', damaged, '--to', a.url],
    ]) {
      const run = await traced(argv, envA());
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toMatch(/damaged\.snapshot\.jsonl:\d+: not valid JSON/);
      expectClean(run, { logs: false });
    }
  });

  it('every file the runs wrote is 0600, and none but the snapshots holds a canary', async () => {
    const files = await walk(dir);
    const written = files.filter((f) => !inputs.has(f));
    expect(written.some((f) => f.endsWith('.log'))).toBe(true);
    expect(written).toEqual(
      expect.arrayContaining([
        snapshot,
        join(dir, 'export.snapshot.jsonl'),
        join(dir, 'cases.json'),
        join(dir, 'audit.jsonl'),
      ]),
    );
    for (const file of written) {
      expect((await stat(file)).mode & 0o777, relative(dir, file)).toBe(0o600);
      if (file.endsWith('.snapshot.jsonl')) continue;
      expect(await readFile(file, 'utf8'), relative(dir, file)).not.toContain(MARK);
    }
  });
});

async function walk(root: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(root, { withFileTypes: true })) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) out.push(...(await walk(path)));
    else out.push(path);
  }
  return out;
}
