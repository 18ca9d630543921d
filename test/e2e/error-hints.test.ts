/**
 * The hint of an error names the next step that fits: only an import says it resumes where it
 * stopped, and a rejected token is looked for where it was actually read (the variable or file used).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { findClosedPort } from '../helpers/closed-port.js';
import { type CliRun, runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let emu: RunningEmulator;
let dir: string;
let dead: string;

function errorLine(run: CliRun): string {
  return run.stderr.split('\n').find((l) => l.startsWith('error: ')) ?? '';
}

beforeAll(async () => {
  emu = await startEmulator({ port: 0, data: join(process.cwd(), 'fixtures/environments/dr-partial.json') });
  dir = await makeTempDir('dds-hints-');
  dead = `http://127.0.0.1:${await findClosedPort()}`;
  await writeFile(
    join(dir, 'dds-migrate.config.json'),
    JSON.stringify({ environments: { prod: { url: emu.url, tokenEnv: 'PROD_TOKEN' } } }),
  );
  const exported = await runCli(['export', '--from', emu.url, '-o', 'dr.snapshot.jsonl'], {
    env: { DDS_SOURCE_TOKEN: emu.token },
    cwd: dir,
  });
  expect(exported.exitCode, exported.stderr).toBe(0);
});

afterAll(async () => {
  await emu.close();
});

describe('an unreachable service', () => {
  it('diff: re-run, without promising a resume', async () => {
    const run = await runCli(['diff', '--from', 'dr.snapshot.jsonl', '--to', dead], {
      env: { DDS_TARGET_TOKEN: 't' },
      cwd: dir,
    });
    expect(run.exitCode).toBe(5);
    const line = errorLine(run);
    expect(line).toContain('Check that the service is reachable, then re-run the command');
    expect(line).not.toMatch(/resume/);
  });

  it('connections list: no resume either', async () => {
    const run = await runCli(['connections', 'list', '--env', dead], { env: { DDS_TOKEN: 't' }, cwd: dir });
    expect(run.exitCode).toBe(5);
    expect(errorLine(run)).not.toMatch(/resume/);
  });

  it('import: says that an import resumes where it stopped', async () => {
    const run = await runCli(['import', 'dr.snapshot.jsonl', '--to', dead], {
      env: { DDS_TARGET_TOKEN: 't' },
      cwd: dir,
    });
    expect(run.exitCode).toBe(5);
    const line = errorLine(run);
    expect(line).toMatch(
      /Check that the service is reachable, then re-run the command \(an import resumes where it stopped\)$/,
    );
    // What failed comes first, as for any other command.
    expect(line).toMatch(/^error: Cannot reach .*ECONNREFUSED/);
  });

  it('undo: says what failed and that an undo resumes where it stopped', async () => {
    // An import into a target that is gone by the time of the undo.
    const gone = await startEmulator({
      port: 0,
      data: join(process.cwd(), 'fixtures/environments/empty.json'),
    });
    const journal = join(dir, 'undo-dead.journal.jsonl');
    const imported = await runCli(
      ['import', 'dr.snapshot.jsonl', '--to', gone.url, '--journal', journal, '--only', 'risk-models-sf'],
      {
        env: { DDS_TARGET_TOKEN: gone.token },
        cwd: dir,
      },
    );
    await gone.close();
    expect(imported.exitCode).toBe(0);
    const run = await runCli(['undo', journal], { env: { DDS_TARGET_TOKEN: 't' }, cwd: dir });
    expect(run.exitCode).toBe(5);
    const line = errorLine(run);
    expect(line).toMatch(/^error: Cannot reach .*ECONNREFUSED/);
    expect(line).toMatch(/\(an undo resumes where it stopped\)$/);
  });
});

describe('a rejected token (401): the hint names where the token was read', () => {
  it('a URL target: the role variable that was used, not tokenEnv', async () => {
    const run = await runCli(['diff', '--from', 'dr.snapshot.jsonl', '--to', emu.url], {
      env: { DDS_TARGET_TOKEN: 'wrong-token' },
      cwd: dir,
    });
    expect(run.exitCode).toBe(4);
    const line = errorLine(run);
    expect(line).toContain(
      `Check the token in DDS_TARGET_TOKEN and that it is valid for ${new URL(emu.url).host}`,
    );
    expect(line).not.toContain('tokenEnv');
  });

  it('a URL with only DDS_TOKEN set: DDS_TOKEN', async () => {
    const run = await runCli(['connections', 'list', '--env', emu.url], {
      env: { DDS_TOKEN: 'wrong-token' },
      cwd: dir,
    });
    expect(run.exitCode).toBe(4);
    expect(errorLine(run)).toContain('Check the token in DDS_TOKEN ');
  });

  it('a config name: its tokenEnv variable, by name', async () => {
    const run = await runCli(['connections', 'list', '--env', 'prod'], {
      env: { PROD_TOKEN: 'wrong-token' },
      cwd: dir,
    });
    expect(run.exitCode).toBe(4);
    expect(errorLine(run)).toContain(
      'Check the token in PROD_TOKEN (tokenEnv of prod) and that it is valid for prod',
    );
  });

  it('a token file: the option that named it', async () => {
    await writeFile(join(dir, 'token.txt'), 'wrong-token\n', { mode: 0o600 });
    const run = await runCli(['connections', 'list', '--env', 'prod', '--token-file', 'token.txt'], {
      env: { PROD_TOKEN: emu.token },
      cwd: dir,
    });
    expect(run.exitCode).toBe(4);
    expect(errorLine(run)).toContain('Check the token in the file of --token-file');
    expect(run.stderr).not.toContain('wrong-token');
  });
});

describe('messages a user can act on', () => {
  it('https:// against a plain-http service: exit 5, one line naming http://, no OpenSSL text', async () => {
    const https = emu.url.replace(/^http:/, 'https:');
    const run = await runCli(['connections', 'list', '--env', https], {
      env: { DDS_TOKEN: emu.token },
      cwd: dir,
    });
    expect(run.exitCode).toBe(5);
    expect(run.stdout).toBe('');
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(errorLine(run)).toContain(`use ${emu.url}`);
    expect(errorLine(run)).toContain('did not answer in TLS');
    expect(run.stderr).not.toMatch(/ssl3|SSL routines|openssl|wrong version|EPROTO/i);
  });

  it('an option typo: exit 2, suggesting the option meant', async () => {
    const run = await runCli(['import', 'dr.snapshot.jsonl', '--to', emu.url, '--overides', 'o.json'], {
      env: { DDS_TARGET_TOKEN: emu.token },
      cwd: dir,
    });
    expect(run.exitCode).toBe(2);
    expect(errorLine(run)).toContain('Unknown option --overides: did you mean --overrides?');
  });
});
