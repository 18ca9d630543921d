/**
 * Encrypted snapshots end to end, over real HTTP against emulators on 127.0.0.1: `export --encrypt-to`
 * and `--passphrase-env`, every reader with `--identity` and `DDS_AGE_IDENTITY`, a restore with every
 * secret, and each way a key or a file can be wrong (exit 2, one line, nothing sent). Interop with the
 * `age` CLI both ways when it is installed (`.ci/run` installs the Debian package `age`); without it
 * those tests are skipped and their names say why.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { secretKeysOf } from '../../src/emulator/masking.js';
import { fixturesDir } from '../../src/paths.js';
import { type CliRun, runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { targetReferences } from './import.helpers.js';

const AGE_MISSING = spawnSync('age', ['--version']).status !== 0;
const INTEROP = AGE_MISSING
  ? 'interop with the age CLI (skipped: `age` is not on PATH; .ci/run installs the Debian package age)'
  : 'interop with the age CLI';

let source: RunningEmulator;
const started: RunningEmulator[] = [];
let dir: string;
let identity: string;
let recipient: string;
let keyFile: string;
let encrypted: string;
let plain: string;
let env: Record<string, string>;
/** Every secret value and connection name of the source. */
let secrets: string[];
let names: string[];

async function emptyTarget(): Promise<RunningEmulator> {
  const target = await startEmulator({ data: { connections: [], ...targetReferences() } });
  started.push(target);
  return target;
}

/** One line on stderr, exit 2, saying `what`. */
function expectOneLineRefusal(run: CliRun, what: RegExp): void {
  expect(run.exitCode, run.stderr).toBe(2);
  expect(run.stderr.trim().split('\n')).toHaveLength(1);
  expect(run.stderr).toMatch(what);
  expect(run.stderr).not.toMatch(/AGE-SECRET-KEY-1[0-9A-Z]{8}/);
  expect(run.stdout).toBe('');
}

beforeAll(async () => {
  source = await startEmulator({
    data: join(fixturesDir(), 'environments', 'prod.json'),
    exportClearSecrets: true,
  });
  started.push(source);
  dir = await makeTempDir('dds-e2e-age-');
  identity = await generateIdentity();
  recipient = await identityToRecipient(identity);
  keyFile = join(dir, 'backup.key');
  await writeFile(keyFile, `# created: 2026-11-27T00:00:00Z\n# public key: ${recipient}\n${identity}\n`, {
    mode: 0o600,
  });
  env = { DDS_TOKEN: source.token, DDS_SOURCE_TOKEN: source.token };
  secrets = [];
  names = [];
  for (const c of source.store.connections) {
    names.push(c.name);
    for (const key of secretKeysOf(c.type)) {
      const value = (c as Record<string, unknown>)[key];
      if (typeof value === 'string' && value.length >= 6) secrets.push(value);
    }
  }
  expect(secrets.length).toBeGreaterThan(10);
  encrypted = join(dir, 'prod.snapshot.age');
  const run = await runCli(['export', '--from', source.url, '--encrypt-to', recipient, '-o', encrypted], {
    env,
    cwd: dir,
  });
  expect(run.exitCode, run.stderr).toBe(0);
  expect(run.stderr).toMatch(/encrypted with age to 1 recipient/);
  plain = join(dir, 'prod.snapshot.jsonl');
  const plainRun = await runCli(['export', '--from', source.url, '-o', plain], { env, cwd: dir });
  expect(plainRun.exitCode, plainRun.stderr).toBe(0);
});

afterAll(async () => {
  await Promise.all(started.map((e) => e.close()));
});

describe('export --encrypt-to', () => {
  it('writes an age file, 0600, with no secret or connection name in its bytes, and nothing else', async () => {
    const bytes = readFileSync(encrypted);
    expect(bytes.subarray(0, 22).toString()).toBe('age-encryption.org/v1\n');
    expect((await stat(encrypted)).mode & 0o777).toBe(0o600);
    for (const value of [...secrets, ...names]) expect(bytes.includes(value), value).toBe(false);
    // The plain export holds them: the check above can fail.
    expect(readFileSync(plain).includes(secrets[0] as string)).toBe(true);
    expect(readdirSync(dir).sort()).toEqual(['backup.key', 'prod.snapshot.age', 'prod.snapshot.jsonl']);
  });

  it('refuses a recipient that is not one, before anything is fetched, leaving no file', async () => {
    const before = source.record.requests.length;
    const out = join(dir, 'bad.snapshot.age');
    const run = await runCli(['export', '--from', source.url, '--encrypt-to', 'age1nothing', '-o', out], {
      env,
      cwd: dir,
    });
    expectOneLineRefusal(
      run,
      /Expected --encrypt-to to be an age recipient \(age1\.\.\.\), got "age1nothing"/,
    );
    expect(source.record.requests.length).toBe(before);
    expect(readdirSync(dir)).not.toContain('bad.snapshot.age');
  });
});

describe('every reader opens it with --identity or DDS_AGE_IDENTITY', () => {
  it('validate', async () => {
    const run = await runCli(['validate', encrypted, '--identity', keyFile], { cwd: dir });
    expect(run.exitCode, run.stderr).toBe(0);
    const viaEnv = await runCli(['validate', encrypted, '--json'], {
      cwd: dir,
      env: { DDS_AGE_IDENTITY: keyFile },
    });
    expect(viaEnv.exitCode, viaEnv.stderr).toBe(0);
    const asPlain = await runCli(['validate', plain, '--json'], { cwd: dir });
    const report = JSON.parse(viaEnv.stdout);
    const plainReport = JSON.parse(asPlain.stdout);
    expect(report.snapshot).toEqual({ ...plainReport.snapshot, path: encrypted });
    expect({ ...report, snapshot: null }).toEqual({ ...plainReport, snapshot: null });
  });

  it('diff, against the environment and against the plain snapshot, as the plain snapshot does', async () => {
    const run = await runCli(
      ['diff', '--from', encrypted, '--to', source.url, '--identity', keyFile, '--json'],
      {
        cwd: dir,
        env,
      },
    );
    const asPlain = await runCli(['diff', '--from', plain, '--to', source.url, '--json'], { cwd: dir, env });
    expect(run.exitCode, run.stderr).toBe(asPlain.exitCode);
    expect({ ...JSON.parse(run.stdout), from: '' }).toEqual({ ...JSON.parse(asPlain.stdout), from: '' });
    const sides = await runCli(['diff', '--from', encrypted, '--to', plain], {
      cwd: dir,
      env: { DDS_AGE_IDENTITY: keyFile },
    });
    expect(sides.exitCode, sides.stderr).toBe(0);
  });

  it('overrides init', async () => {
    const run = await runCli(['overrides', 'init', encrypted, '-o', 'o1.json', '--identity', keyFile], {
      cwd: dir,
    });
    const asPlain = await runCli(['overrides', 'init', plain, '-o', 'o2.json'], { cwd: dir });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toBe(asPlain.stdout);
    expect(readFileSync(join(dir, 'o1.json'), 'utf8')).toBe(readFileSync(join(dir, 'o2.json'), 'utf8'));
  });

  it('import restores every connection with its secrets and the scan profiles; verify reads it as the plain snapshot', async () => {
    const target = await emptyTarget();
    const journal = join(dir, 'restore.journal.jsonl');
    const run = await runCli(
      ['import', encrypted, '--to', target.url, '--identity', keyFile, '--journal', journal, '--no-progress'],
      { cwd: dir, env: { DDS_TARGET_TOKEN: target.token } },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(target.store.connections.map((c) => c.name).sort()).toEqual([...names].sort());
    for (const c of source.store.connections) {
      const restored = target.store.getConnection(c.name) as Record<string, unknown>;
      for (const key of secretKeysOf(c.type)) {
        expect(restored[key], `${c.name} ${key}`).toEqual((c as Record<string, unknown>)[key]);
      }
    }
    const runnable = source.store.profiles.filter((p) => p.isSingleRunScan !== true).map((p) => p.name);
    expect(target.store.profiles.map((p) => p.name).sort()).toEqual(runnable.sort());
    // Nothing the run wrote beside the journal holds a secret.
    for (const file of readdirSync(dir).filter((f) => f.startsWith('restore.'))) {
      const text = readFileSync(join(dir, file), 'utf8');
      for (const value of secrets) expect(text.includes(value), `${file} holds a secret`).toBe(false);
    }
    const verify = await runCli(['verify', encrypted, '--env', target.url, '--json'], {
      cwd: dir,
      env: { DDS_TOKEN: target.token, DDS_AGE_IDENTITY: keyFile },
    });
    // As the plain snapshot's verify of the same target says.
    const asPlain = await runCli(['verify', plain, '--env', target.url, '--json'], {
      cwd: dir,
      env: { DDS_TOKEN: target.token },
    });
    expect(verify.exitCode, verify.stderr).toBe(asPlain.exitCode);
    expect(JSON.parse(verify.stdout).connections.present).toBe(names.length);
    expect({ ...JSON.parse(verify.stdout), snapshot: '' }).toEqual({
      ...JSON.parse(asPlain.stdout),
      snapshot: '',
    });
  });
});

describe('a passphrase', () => {
  it('encrypts on export and opens on read', async () => {
    const out = join(dir, 'pass.snapshot.age');
    const passEnv = { ...env, BACKUP_PASSPHRASE: 'violet-anchor-tundra-ledger-orbit' };
    const run = await runCli(
      ['export', '--from', source.url, '--passphrase-env', 'BACKUP_PASSPHRASE', '-o', out],
      {
        env: passEnv,
        cwd: dir,
      },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(readFileSync(out).toString('latin1')).toMatch(/^age-encryption\.org\/v1\n-> scrypt /);
    const read = await runCli(['validate', out, '--passphrase-env', 'BACKUP_PASSPHRASE'], {
      env: passEnv,
      cwd: dir,
    });
    expect(read.exitCode, read.stderr).toBe(0);
    const wrong = await runCli(['validate', out, '--passphrase-env', 'P'], {
      env: { P: 'not-it' },
      cwd: dir,
    });
    expectOneLineRefusal(wrong, /the passphrase given does not open it\. Check the passphrase/);
    const none = await runCli(['validate', out, '--identity', keyFile], { cwd: dir });
    expectOneLineRefusal(none, /encrypted with a passphrase \(age\) and none was given/);
  });

  it('an unset variable is refused', async () => {
    const run = await runCli(['validate', encrypted, '--passphrase-env', 'NOT_SET'], { cwd: dir });
    expectOneLineRefusal(run, /--passphrase-env NOT_SET: the variable NOT_SET is not set/);
    const exp = await runCli(['export', '--from', source.url, '--passphrase-env', 'NOT_SET', '-o', 'x.age'], {
      env,
      cwd: dir,
    });
    expectOneLineRefusal(exp, /the variable NOT_SET is not set/);
  });
});

describe('bad keys and bad files: exit 2, one line, nothing sent', () => {
  let target: RunningEmulator;
  beforeAll(async () => {
    target = await emptyTarget();
  });
  const importRun = (snapshot: string, extra: string[], extraEnv: Record<string, string> = {}) =>
    runCli(['import', snapshot, '--to', target.url, '--no-progress', ...extra], {
      cwd: dir,
      env: { DDS_TARGET_TOKEN: target.token, ...extraEnv },
    });

  it('no identity given', async () => {
    expectOneLineRefusal(
      await importRun(encrypted, []),
      /the snapshot is encrypted \(age\) and no identity was given\. Give --identity FILE/,
    );
    expect(target.record.requests).toEqual([]);
  });

  it('the wrong identity', async () => {
    const other = join(dir, 'other.key');
    await writeFile(other, `${await generateIdentity()}\n`);
    expectOneLineRefusal(
      await importRun(encrypted, ['--identity', other]),
      /none of the identities given opens it/,
    );
    expect(target.record.requests).toEqual([]);
  });

  it('an identity file that is not one, and one that is missing', async () => {
    const notKey = join(dir, 'not-a.key');
    await writeFile(notKey, '# my key\nhunter2-not-a-key\n');
    const run = await importRun(encrypted, ['--identity', notKey]);
    expectOneLineRefusal(run, /not-a\.key:2: is not an age identity \(AGE-SECRET-KEY-1\.\.\.\)/);
    expect(run.stderr).not.toContain('hunter2');
    expectOneLineRefusal(
      await importRun(encrypted, [], { DDS_AGE_IDENTITY: join(dir, 'missing.key') }),
      /missing\.key \(DDS_AGE_IDENTITY\): no such file/,
    );
    expect(target.record.requests).toEqual([]);
  });

  it('a tampered file and a cut one', async () => {
    const bytes = readFileSync(encrypted);
    const tampered = Buffer.from(bytes);
    tampered[Math.floor(bytes.length / 2)] = (tampered[Math.floor(bytes.length / 2)] as number) ^ 0x20;
    const tamperedPath = join(dir, 'tampered.snapshot.age');
    await writeFile(tamperedPath, tampered);
    expectOneLineRefusal(
      await importRun(tamperedPath, ['--identity', keyFile]),
      /is damaged, cut short or was changed \(chunk/,
    );
    const cutPath = join(dir, 'cut.snapshot.age');
    await writeFile(cutPath, bytes.subarray(0, bytes.length - 1000));
    expectOneLineRefusal(
      await importRun(cutPath, ['--identity', keyFile]),
      /is damaged, cut short or was changed/,
    );
    expect(target.record.requests).toEqual([]);
  });
});

describe.skipIf(AGE_MISSING)(INTEROP, () => {
  it('age -d -i KEY decrypts what export wrote into a snapshot validate accepts', async () => {
    const out = join(dir, 'from-age.snapshot.jsonl');
    execFileSync('age', ['-d', '-i', keyFile, '-o', out, encrypted]);
    const run = await runCli(['validate', out, '--json'], { cwd: dir });
    expect(run.exitCode, run.stderr).toBe(0);
    // The same entries, byte for byte, as the plain export's.
    const asPlain = await runCli(['validate', plain, '--json'], { cwd: dir });
    expect(JSON.parse(run.stdout).snapshot.sha256).toBe(JSON.parse(asPlain.stdout).snapshot.sha256);
  });

  it('a file `age -r` wrote (binary and armored) is read by every reader and imports', async () => {
    const byAge = join(dir, 'by-age.snapshot.age');
    execFileSync('age', ['-r', recipient, '-o', byAge, plain]);
    const armored = join(dir, 'by-age-armored.snapshot.age');
    execFileSync('age', ['-a', '-r', recipient, '-o', armored, plain]);
    const keyEnv = { DDS_AGE_IDENTITY: keyFile };
    for (const file of [byAge, armored]) {
      const validate = await runCli(['validate', file], { cwd: dir, env: keyEnv });
      expect(validate.exitCode, validate.stderr).toBe(0);
      const overrides = await runCli(['overrides', 'init', file, '-o', `${file}.overrides.json`], {
        cwd: dir,
        env: keyEnv,
      });
      expect(overrides.exitCode, overrides.stderr).toBe(0);
    }
    const target = await emptyTarget();
    const run = await runCli(['import', byAge, '--to', target.url, '--no-progress'], {
      cwd: dir,
      env: { ...keyEnv, DDS_TARGET_TOKEN: target.token },
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(target.store.connections).toHaveLength(names.length);
    const diff = await runCli(['diff', '--from', byAge, '--to', target.url], {
      cwd: dir,
      env: { ...keyEnv, DDS_TOKEN: target.token },
    });
    // Every connection unchanged (the one-time scan profile the import skips by design is added).
    expect(diff.stdout).toMatch(/0 added, 0 removed, 0 changed, \d+ unchanged/);
    const verify = await runCli(['verify', byAge, '--env', target.url], {
      cwd: dir,
      env: { ...keyEnv, DDS_TOKEN: target.token },
    });
    // Every connection present (the one-time scan profile the import skips by design is not).
    expect(verify.stdout).toContain(`${names.length} present, 0 different, 0 missing, 0 extra`);
  });
});
