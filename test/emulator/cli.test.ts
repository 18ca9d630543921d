/** `dds-migrate emulator`: prints URL and token, serves, stops cleanly on the abort signal (SIGINT/SIGTERM). */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import { send } from './raw-http.js';

function startCli(argv: string[]) {
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
    cwd: process.cwd(),
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
});
