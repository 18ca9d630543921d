/**
 * A distinctive token must never appear in an error message, a log line (stderr or --log-file, even at
 * debug level) or any CLI output, whatever happens: 401, 500, network failure, a service that echoes it.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import nock from 'nock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { networkError } from './client-fixture.js';

const CANARY = 'CANARY-7f3a9b2e-d41d-TOKEN';
const USER_CANARY = 'USERCANARY-88c1e0f2';
const SESSION_CANARY = 'SESSIONCANARY-19ab77';
const HOST = 'https://dds.canary.test';
const LIST = '/api/v1/ds-connections';

let dir: string;
let logFile: string;

beforeEach(async () => {
  dir = await makeTempDir('dds-canary-');
  logFile = join(dir, 'run.log');
});

afterEach(async () => {
  nock.cleanAll();
});

async function runList(env: Record<string, string>, extra: string[] = [], envRef = HOST) {
  const run = await runCli(
    [
      'connections',
      'list',
      '--env',
      envRef,
      '--format',
      'ndjson',
      '--log-level',
      'debug',
      '--log-file',
      logFile,
      ...extra,
    ],
    { env, cwd: dir },
  );
  const log = await readFile(logFile, 'utf8').catch(() => '');
  return { ...run, log };
}

function expectNoCanary(texts: readonly string[]): void {
  // Every text must exist to be judged: a log that failed to appear would pass every check below.
  expect(texts.at(-1), 'the log file is empty or missing').not.toBe('');
  expect(texts.join(''), 'the run printed nothing').not.toBe('');
  for (const text of texts) {
    for (const canary of [CANARY, USER_CANARY, SESSION_CANARY]) expect(text).not.toContain(canary);
  }
}

describe('the token never leaks', () => {
  it('on a 401', async () => {
    nock(HOST).get(LIST).query(true).reply(401, 'Unauthorized');
    const run = await runList({ DDS_TOKEN: CANARY });
    expect(run.exitCode).toBe(4);
    expect(run.log).toContain('"status":401');
    expectNoCanary([run.stdout, run.stderr, run.log]);
  });

  it('on 500s until the retries run out', async () => {
    nock(HOST)
      .get(LIST)
      .query(true)
      .times(6)
      .reply(500, { status: 'error', message: 'Internal error', errors: [] }, { 'Retry-After': '0' });
    const run = await runList({ DDS_TOKEN: CANARY });
    expect(run.exitCode).toBe(5);
    expect(run.log).toContain('retrying');
    expectNoCanary([run.stdout, run.stderr, run.log]);
  });

  it('on a network failure', async () => {
    nock(HOST)
      .get(LIST)
      .query(true)
      .times(3)
      .replyWithError(networkError('ECONNREFUSED', 'connect ECONNREFUSED'));
    const run = await runList({ DDS_TOKEN: CANARY });
    expect(run.exitCode).toBe(5);
    expectNoCanary([run.stdout, run.stderr, run.log]);
  });

  it('when the service echoes the token in its error message', async () => {
    nock(HOST)
      .get(LIST)
      .query(true)
      .reply(400, { error: `token Bearer ${CANARY} has no access` });
    const run = await runList({ DDS_TOKEN: CANARY });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toContain('has no access');
    expectNoCanary([run.stdout, run.stderr, run.log]);
  });

  it('on success at debug level, through a user-token exchange', async () => {
    await import('node:fs/promises').then((fs) =>
      fs.writeFile(
        join(dir, 'dds-migrate.config.json'),
        JSON.stringify({ environments: { canary: { url: HOST, refreshTokenEnv: 'CANARY_USER' } } }),
      ),
    );
    nock(HOST)
      .get('/api/v1/refresh-access-token')
      .reply(200, { success: true, systemToken: SESSION_CANARY })
      .get(LIST)
      .query(true)
      .reply(401, 'jwt expired')
      .get('/api/v1/refresh-access-token')
      .reply(200, { success: true, systemToken: SESSION_CANARY })
      .get(LIST)
      .query(true)
      .reply(200, {
        data: { ds_connections: [{ name: 'a', type: 's3', password: 'p4ssw0rd-secret' }], totalCount: 1 },
      });
    const run = await runList({ CANARY_USER: USER_CANARY }, [], 'canary');
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ name: 'a', type: 's3', password: '******' });
    expect(run.log).toContain('"level":20');
    expectNoCanary([run.stdout, run.stderr, run.log]);
    expect(run.log).not.toContain('p4ssw0rd-secret');
  });
});
