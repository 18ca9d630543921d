/** `dds-migrate emulator`: prints URL and token, serves, stops cleanly on the abort signal (SIGINT/SIGTERM). */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { send } from './raw-http.js';

function startCli(argv: string[], cwd: string = process.cwd()) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  stderr.on('data', (c: Buffer) => {
    err += c.toString('utf8');
  });
  const controller = new AbortController();
  const done = runCli(['emulator', ...argv], {
    stdout,
    stderr,
    env: {},
    cwd,
    signal: controller.signal,
  });
  let exited = false;
  void done.finally(() => {
    exited = true;
  });
  const url = (async () => {
    // Poll for the condition (the URL printed) until a deadline far beyond a slow start, not a count of
    // sleeps; stop early when the command has exited or reported an error.
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline && !exited) {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m?.[1] !== undefined) return m[1];
      if (/\S/.test(err) && !/Serving/.test(err)) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`no URL printed; stdout=${out} stderr=${err}`);
  })();
  return { url, done, stop: () => controller.abort(), output: () => ({ out, err }) };
}

describe('emulator command', () => {
  it('prints its URL and token, serves the seed, and exits 0 when stopped', async () => {
    const cli = startCli([
      '--port',
      '0',
      '--token',
      'cli-token',
      '--data',
      'fixtures/environments/prod.json',
      '--seed',
      '3',
    ]);
    let url: string;
    try {
      url = await cli.url;
      expect(cli.output().out).toContain('API token: cli-token');
      const r = await send(url, 'GET', '/api/v1/ds-connections?limit=1', { auth: 'cli-token' });
      expect(r.status).toBe(200);
      expect((r.json as { data: { totalCount: number } }).data.totalCount).toBeGreaterThanOrEqual(60);
    } finally {
      // Stopped whatever happened above, so a failure does not leave a server listening in the worker.
      cli.stop();
    }
    expect(await cli.done).toBe(0);
    await expect(send(url, 'GET', '/api/v1/ds-connections', { auth: 'cli-token' })).rejects.toThrow(
      /ECONNREFUSED/,
    );
  });

  it('refuses a bad fault spec with a usage error (exit 2) before listening', async () => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (c: Buffer) => {
      err += c.toString('utf8');
    });
    const code = await runCli(['emulator', '--faults', 'explode:0.5'], {
      stdout,
      stderr,
      env: {},
      cwd: process.cwd(),
    });
    expect(code).toBe(2);
    expect(err).toMatch(/explode/);
  });

  it('--data NAME serves a shipped environment from any folder; --generate adds generated connections', async () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'dds-emu-cli-'));
    const cli = startCli(['--data', 'empty', '--generate', '25', '--token', 't'], elsewhere);
    try {
      const url = await cli.url;
      const r = await send(url, 'GET', '/api/v1/ds-connections?limit=1', { auth: 't' });
      expect((r.json as { data: { totalCount: number } }).data.totalCount).toBe(25);
    } finally {
      cli.stop();
      rmSync(elsewhere, { recursive: true, force: true });
    }
    expect(await cli.done).toBe(0);
  });

  it('--test-fail, --test-answer success and --no-references-api', async () => {
    // Two names of the shipped prod environment, read from the file so the test follows its data.
    const prod = JSON.parse(readFileSync('fixtures/environments/prod.json', 'utf8')) as {
      connections: Array<{ name: string }>;
    };
    const [failing, passing] = prod.connections.map((c) => c.name);
    const cli = startCli([
      '--data',
      'prod',
      '--token',
      't',
      '--test-fail',
      ` ${failing},no-such-name`,
      '--test-answer',
      'success',
      '--no-references-api',
    ]);
    try {
      const url = await cli.url;
      const test = (name: string) =>
        send(url, 'POST', '/api/v1/ds-connection-test', {
          auth: 't',
          body: { ds_connection: { name }, isNewPassword: false },
        });
      expect((await test(failing!)).json).toMatchObject({ success: false });
      expect((await test(passing!)).json).toMatchObject({ success: true });
      expect((await send(url, 'GET', '/api/v1/scanner-status', { auth: 't' })).status).toBe(404);
      expect((await send(url, 'GET', '/api/v1/credentials', { auth: 't' })).status).toBe(404);
    } finally {
      cli.stop();
    }
    expect(await cli.done).toBe(0);
  });

  it.each([
    [['--data', 'no-such-env'], /no-such-env.*does not exist/s],
    [['--generate', '-1'], /generate/],
    [['--test-answer', 'maybe'], /test-answer/],
    [['--faults', 'trickle=-5'], /trickle/],
    // A latency past Node's timer range (2^31 - 1 ms) fired at once: bounded to 10 minutes.
    [
      ['--latency', '1e12'],
      /Expected --latency to be a number of milliseconds from 0 to 600000, got 1000000000000/,
    ],
    [['--faults', 'latency=3000000000'], /latency of at most 600000 ms/],
    [['--jitter', '3000000000'], /Expected --jitter to be a number of milliseconds from 0 to 600000/],
  ])('refuses %j with a usage error (exit 2)', async (argv, message) => {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let err = '';
    stderr.on('data', (c: Buffer) => {
      err += c.toString('utf8');
    });
    const code = await runCli(['emulator', ...argv], { stdout, stderr, env: {}, cwd: process.cwd() });
    expect(code).toBe(2);
    expect(err).toMatch(message);
  });
});
