// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:NAME}" is a literal overrides placeholder, not a template
import { readFile, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clearRegisteredSecrets } from '../../src/secrets.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { writeSnapshot } from './import.helpers.js';

const CANARY = 'canary-7f3a9c1e-secret';
const TOKEN = 'canary-target-token-42';

/** A target that echoes the secret it was sent in its error messages, as a careless service might. */
function startEchoingTarget(): Promise<{ server: Server; url: string }> {
  let failedOnce = false;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8');
    });
    req.on('end', () => {
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(json));
      };
      if (req.headers.authorization !== `Bearer ${TOKEN}`) return send(401, { error: 'unauthorized' });
      const url = req.url ?? '';
      if (req.method === 'GET' && url.startsWith('/api/v1/ds-connections')) {
        return send(200, {
          status: 'success',
          statusCode: 200,
          data: { ds_connections: [], totalCount: 0 },
          message: null,
        });
      }
      if (req.method === 'GET' && url.startsWith('/api/v1/ds_connections/')) {
        return send(400, {
          error: `Unable to locate data source ${decodeURIComponent(url.split('/').pop() ?? '')}`,
        });
      }
      if (req.method === 'POST' && url === '/api/v1/ds_connections') {
        const conn = (JSON.parse(body) as { ds_connection: { name: string; password: string } })
          .ds_connection;
        if (conn.name === 'alpha') return send(400, { error: `password ${conn.password} is rejected` });
        if (!failedOnce) {
          failedOnce = true;
          return send(500, {
            status: 'error',
            message: `internal error with ${conn.password}`,
            errors: [{ detail: conn.password }],
          });
        }
        return send(200, { status: 'success', data: { _id: 'f'.repeat(24), name: conn.name } });
      }
      return send(404, { error: 'no route' });
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () =>
      resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }),
    );
  });
}

describe('import: a canary secret appears in no output', () => {
  let dir: string;
  let target: { server: Server; url: string };
  beforeAll(async () => {
    dir = await makeTempDir('import-canary-');
    target = await startEchoingTarget();
  });
  afterAll(async () => {
    clearRegisteredSecrets();
    // Closed for good, kept-alive sockets included, before the file ends.
    target.server.closeAllConnections();
    await new Promise<void>((resolve) => target.server.close(() => resolve()));
  });

  it('keeps the override secret and the token out of stdout, stderr, log, report, id map and journal', async () => {
    const snapshot = join(dir, 's.snapshot.jsonl');
    await writeSnapshot(
      snapshot,
      [
        { _id: 'a'.repeat(24), name: 'alpha', type: 'custom-db', host: 'db1', password: '******' },
        { _id: 'b'.repeat(24), name: 'beta', type: 'custom-db', host: 'db2', password: '******' },
      ],
      'https://prod.example.com',
    );
    const overrides = join(dir, 'o.json');
    await writeFile(overrides, JSON.stringify({ all: { password: '${env:DB_PASSWORD}' } }));
    const files = {
      journal: join(dir, 'j.jsonl'),
      log: join(dir, 'log.jsonl'),
      report: join(dir, 'r.jsonl'),
      ids: join(dir, 'ids.json'),
    };
    const run = await runCli(
      [
        'import',
        snapshot,
        '--to',
        target.url,
        '--overrides',
        overrides,
        '--journal',
        files.journal,
        '--log-file',
        files.log,
        '--log-level',
        'debug',
        '--report',
        files.report,
        '--id-map',
        files.ids,
      ],
      { env: { DDS_TARGET_TOKEN: TOKEN, DB_PASSWORD: CANARY } },
    );
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(/alpha: HTTP 400 password \*{6} is rejected/);
    const everything = [
      run.stdout,
      run.stderr,
      ...(await Promise.all(Object.values(files).map((f) => readFile(f, 'utf8')))),
    ].join('\n');
    expect(everything).toContain('beta');
    expect(everything).not.toContain(CANARY);
    expect(everything).not.toContain(TOKEN);
  });
});
