/**
 * A service that echoes what it knows: the token (registered, scrubbed everywhere) and a credential
 * (never registered by a command that did not send it, so masked by what names it). Bodies of every
 * shape a failure can take: a JSON error (400), 500s until the retries run out, a proxy's HTML page,
 * a text body longer than the cut of a service message, `errors[]` items without a message. Each runs
 * through the CLI at `--log-level trace --log-file F`; no canary may reach stdout, stderr or the log.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import nock from 'nock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clearRegisteredSecrets } from '../../src/secrets.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const TOKEN = 'CANARY-echo-token-4be1d7c0';
const PASSWORD = 'CANARY-echo-password-91f3';
const HOST = 'https://dds.echo.test';
const LIST = '/api/v1/ds-connections';
const EXPORT = '/api/v1/ds-connections/file-download/export';
const PROFILE = '/api/v1/scanProfiles/66b2a0d1c3e4f5a6b7c8d901';

let dir: string;
let logFile: string;

beforeEach(async () => {
  dir = await makeTempDir('dds-echo-');
  logFile = join(dir, 'run.log');
  // Each run is judged on what it registers itself.
  clearRegisteredSecrets();
});

afterEach(async () => {
  nock.cleanAll();
  clearRegisteredSecrets();
});

async function run(argv: readonly string[]) {
  const result = await runCli([...argv, '--log-level', 'trace', '--log-file', logFile], {
    env: { DDS_TOKEN: TOKEN, DDS_SOURCE_TOKEN: TOKEN },
    cwd: dir,
  });
  const log = await readFile(logFile, 'utf8').catch(() => '');
  return { ...result, log };
}

function expectNoCanary(result: { stdout: string; stderr: string; log: string }): void {
  // Empty text passes every "does not contain": the log and the printed output must exist to be judged.
  expect(result.log, 'the log file is empty or missing').not.toBe('');
  expect(result.stdout + result.stderr, 'the run printed nothing').not.toBe('');
  for (const text of [result.stdout, result.stderr, result.log]) expect(text).not.toContain('CANARY');
}

const LIST_ARGS = ['connections', 'list', '--env', HOST, '--format', 'json'];

describe('a service that echoes the token or a credential', () => {
  it('400 with a JSON error naming both', async () => {
    nock(HOST)
      .get(LIST)
      .query(true)
      .reply(400, {
        status: 'error',
        statusCode: 400,
        message: `Bearer ${TOKEN} may not read; login with password=${PASSWORD} failed`,
        errors: [{ field: 'password', value: PASSWORD }, { password: PASSWORD }],
      });
    const result = await run(LIST_ARGS);
    expect(result.exitCode).toBe(1);
    // The message is still there, with the secrets masked.
    expect(result.stderr).toContain('may not read; login with password=****** failed');
    expect(result.stderr).toContain('{"field":"password"}');
    expectNoCanary(result);
  });

  it('500s echoing the password until the retries run out', async () => {
    nock(HOST)
      .get(LIST)
      .query(true)
      .times(6)
      .reply(
        500,
        { status: 'error', message: `internal error: {"password":"${PASSWORD}","token":"${TOKEN}"}` },
        { 'Retry-After': '0' },
      );
    const result = await run(LIST_ARGS);
    expect(result.exitCode).toBe(5);
    expect(result.log).toContain('retrying');
    expectNoCanary(result);
  });

  it('an HTML error page whose title names both', async () => {
    const page = `<!doctype html><html><head><title>Login failed: password=${PASSWORD} token ${TOKEN}</title></head><body><h1>${PASSWORD}</h1></body></html>`;
    nock(HOST).get(PROFILE).reply(404, page, { 'Content-Type': 'text/html' });
    const result = await run(['profiles', 'get', '66b2a0d1c3e4f5a6b7c8d901', '--env', HOST]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('HTML page');
    expectNoCanary(result);
  });

  it('an error page on the streamed export', async () => {
    const page = `<html><head><title>Error for ${TOKEN}: secret_key=${PASSWORD}</title></head></html>`;
    nock(HOST).get(EXPORT).query(true).reply(403, page, { 'Content-Type': 'text/html' });
    const out = join(dir, 'never.snapshot.jsonl');
    // Connections only: the export endpoint is the one that answers with the page.
    const result = await run(['export', '--from', HOST, '--include', 'connections', '-o', out]);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toContain('403');
    expectNoCanary(result);
    await expect(stat(out)).rejects.toThrow();
  });

  it('a text body whose cut falls inside the echoed token', async () => {
    // The service message is cut at 300 characters: the token straddles the cut.
    const body = `${'x'.repeat(290)} ${TOKEN} and more words after it to be cut away`;
    nock(HOST).get(LIST).query(true).reply(400, body, { 'Content-Type': 'text/plain' });
    const result = await run(LIST_ARGS);
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/x{100}/);
    expectNoCanary(result);
    expect(result.stderr).not.toContain('CANARY-echo');
  });

  it('a JSON message whose cut falls inside the echoed password', async () => {
    const message = `${'y'.repeat(480)} password: ${PASSWORD}`;
    nock(HOST).get(LIST).query(true).reply(400, { error: message });
    const result = await run(LIST_ARGS);
    expect(result.exitCode).toBe(1);
    expectNoCanary(result);
  });

  it('a 401 whose text body echoes the token', async () => {
    nock(HOST).get(LIST).query(true).reply(401, `invalid token ${TOKEN}`);
    const result = await run(LIST_ARGS);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain('invalid token ******');
    expectNoCanary(result);
  });

  it('the log file is 0600', async () => {
    nock(HOST)
      .get(LIST)
      .query(true)
      .reply(200, { data: { ds_connections: [], totalCount: 0 } });
    const result = await run(LIST_ARGS);
    expect(result.exitCode).toBe(0);
    expect((await stat(logFile)).mode & 0o777).toBe(0o600);
  });
});
