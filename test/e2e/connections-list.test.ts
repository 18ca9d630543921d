import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_POLICY } from '../../src/api/retry-policy.js';
import { generateConnections, type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { findClosedPort } from '../helpers/closed-port.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const COUNT = 257;
const seedConnections = generateConnections(COUNT, { seed: 7 });
let emu: RunningEmulator;

function parseLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

beforeAll(async () => {
  // maxPageSize 100: the client asks for 1000 and must page through clamped pages.
  emu = await startEmulator({ port: 0, data: { connections: seedConnections }, maxPageSize: 100 });
});

afterAll(async () => {
  await emu.close();
});

describe('connections list against the emulator', () => {
  it('prints every connection exactly once as ndjson, through clamped pages', async () => {
    const run = await runCli(['connections', 'list', '--env', emu.url, '--format', 'ndjson'], {
      env: { DDS_TOKEN: emu.token },
    });
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    const names = parseLines(run.stdout).map((c) => c.name);
    expect(names).toHaveLength(COUNT);
    expect(new Set(names)).toEqual(new Set(seedConnections.map((c) => c.name)));
    const listRequests = emu.record.requests.filter((r) => r.path === '/api/v1/ds-connections');
    expect(listRequests.length).toBeGreaterThanOrEqual(Math.ceil(COUNT / 100));
  });

  it('defaults to ndjson when stdout is not a terminal, and to a table on a terminal', async () => {
    const piped = await runCli(['connections', 'list', '--env', emu.url, '--type', 'smb'], {
      env: { DDS_TOKEN: emu.token },
    });
    expect(piped.exitCode).toBe(0);
    const expected = seedConnections.filter((c) => c.type === 'smb').length;
    expect(parseLines(piped.stdout)).toHaveLength(expected);
    const tty = await runCli(['connections', 'list', '--env', emu.url, '--type', 'smb'], {
      env: { DDS_TOKEN: emu.token },
      tty: true,
    });
    expect(tty.exitCode).toBe(0);
    const lines = tty.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^name\s+type\s+_id/);
    expect(lines).toHaveLength(expected + 2);
  });

  it('--type s3 lists only s3 connections, all of them', async () => {
    const run = await runCli(
      ['connections', 'list', '--env', emu.url, '--type', 's3', '--format', 'ndjson'],
      {
        env: { DDS_TOKEN: emu.token },
      },
    );
    expect(run.exitCode).toBe(0);
    const listed = parseLines(run.stdout);
    const expected = seedConnections.filter((c) => c.type === 's3').map((c) => c.name);
    expect(expected.length).toBeGreaterThan(0);
    expect(listed.every((c) => c.type === 's3')).toBe(true);
    expect(listed.map((c) => c.name).sort()).toEqual([...expected].sort());
  });

  it('never prints a secret value of the seed', async () => {
    const run = await runCli(['connections', 'list', '--env', emu.url, '--format', 'json'], {
      env: { DDS_TOKEN: emu.token },
    });
    expect(run.exitCode).toBe(0);
    const listed = JSON.parse(run.stdout) as Record<string, unknown>[];
    expect(listed).toHaveLength(COUNT);
    const secrets = seedConnections.flatMap((c) =>
      ['password', 'aws_secret_key']
        .map((k) => c[k])
        .filter((v): v is string => typeof v === 'string' && v.length > 5),
    );
    expect(secrets.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(run.stdout).not.toContain(secret);
  });

  it('a wrong token exits 4 with one line that does not contain the token', async () => {
    const token = 'wrong-token-Zq81x7Kd';
    const run = await runCli(['connections', 'list', '--env', emu.url], { env: { DDS_TOKEN: token } });
    expect(run.exitCode).toBe(4);
    expect(run.stdout).toBe('');
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(run.stderr).toMatch(/^error: .*401/);
    expect(run.stderr).not.toContain(token);
  });

  it('an unreachable port exits 5 quickly', async () => {
    const port = await findClosedPort();
    const logFile = join(await makeTempDir('dds-list-refused-'), 'run.log');
    const run = await runCli(
      ['connections', 'list', '--env', `http://127.0.0.1:${port}`, '--log-file', logFile],
      { env: { DDS_TOKEN: 'some-token-value' } },
    );
    expect(run.exitCode).toBe(5);
    expect(run.stderr).toMatch(/ECONNREFUSED/);
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
    // A dead port must not hold the user through a full backoff: judged on the waits the client chose
    // (its log), not on a stopwatch a busy machine would slow down.
    const retries = (await readFile(logFile, 'utf8'))
      .split('\n')
      .filter((line) => line.includes('retrying after a transient failure'))
      .map((line) => JSON.parse(line) as { networkCode?: string; delayMs: number });
    expect(retries).toHaveLength(DEFAULT_RETRY_POLICY.refusedRetries);
    expect(retries.every((r) => r.networkCode === 'ECONNREFUSED')).toBe(true);
    expect(retries.reduce((sum, r) => sum + r.delayMs, 0)).toBeLessThan(3_000);
  });

  it('a bad flag exits 2', async () => {
    const run = await runCli(['connections', 'list', '--env', emu.url, '--colour'], {
      env: { DDS_TOKEN: emu.token },
    });
    expect(run.exitCode).toBe(2);
    const badFormat = await runCli(['connections', 'list', '--env', emu.url, '--format', 'xml'], {
      env: { DDS_TOKEN: emu.token },
    });
    expect(badFormat.exitCode).toBe(2);
    const badFilter = await runCli(['connections', 'list', '--env', emu.url, '--filter', '{not json'], {
      env: { DDS_TOKEN: emu.token },
    });
    expect(badFilter.exitCode).toBe(2);
    expect(badFilter.stderr).toMatch(/--filter/);
  });

  it('a missing token exits 2 and names the variable', async () => {
    const run = await runCli(['connections', 'list', '--env', emu.url], { env: {} });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/DDS_TOKEN/);
  });

  it('survives HTML 502 pages, resets, 429s and text/html labels with every connection exactly once', async () => {
    const flaky = await startEmulator({
      port: 0,
      data: { connections: seedConnections },
      maxPageSize: 100,
      htmlContentType: true,
      faults: 'html-502:0.3@GET:/ds-connections,reset:0.2@GET:/ds-connections,429=0:0.2@GET:/ds-connections',
      seed: 11,
    });
    try {
      const run = await runCli(['connections', 'list', '--env', flaky.url, '--format', 'ndjson'], {
        env: { DDS_TOKEN: flaky.token },
      });
      expect(run.exitCode).toBe(0);
      const names = parseLines(run.stdout).map((c) => c.name);
      expect(names).toHaveLength(COUNT);
      expect(new Set(names).size).toBe(COUNT);
      const faulted = flaky.record.requests.filter(
        (r) => r.fault !== null && r.fault !== 'html-content-type',
      );
      expect(faulted.length).toBeGreaterThan(0);
    } finally {
      await flaky.close();
    }
  });

  it.each([
    ['oversize=80', 'a plain body'],
    // 2 GiB inflated (a few MB on the wire): the client reaches the 64 MiB cap long before the emulator
    // finishes. With less, the in-process emulator could finish first, and under the tests' nock
    // interceptor (which sends `connection: close`) the closing socket cut the answer short (ECONNRESET).
    ['oversize-gzip=2048', 'a gzip body that inflates past the cap'],
  ])(
    'refuses an answer larger than the size cap (emulator fault %s: %s): one line, nothing printed',
    async (fault) => {
      const big = await startEmulator({
        port: 0,
        data: { connections: seedConnections },
        faults: `${fault}@GET:/ds-connections`,
      });
      try {
        const run = await runCli(['connections', 'list', '--env', big.url, '--format', 'ndjson'], {
          env: { DDS_TOKEN: big.token },
        });
        expect(run.exitCode).toBe(1);
        expect(run.stdout).toBe('');
        const lines = run.stderr.split('\n').filter((l) => l !== '');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(/^error: .*GET \/api\/v1\/ds-connections/);
      } finally {
        await big.close();
      }
    },
  );

  it('exchanges a user token from the config file and lists with the session token (raw scheme)', async () => {
    const dir = await makeTempDir('dds-list-');
    await writeFile(
      join(dir, 'dds-migrate.config.json'),
      JSON.stringify({
        environments: { local: { url: emu.url, refreshTokenEnv: 'EMU_USER', authScheme: 'raw' } },
      }),
    );
    emu.record.reset();
    const run = await runCli(['connections', 'list', '--env', 'local', '--type', 's3'], {
      env: { EMU_USER: emu.userToken },
      cwd: dir,
    });
    expect(run.exitCode).toBe(0);
    expect(parseLines(run.stdout).length).toBeGreaterThan(0);
    expect(emu.record.requests.map((r) => r.path)[0]).toBe('/api/v1/refresh-access-token');
  });
});
