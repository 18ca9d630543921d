/**
 * Client hardening: names that cannot be looked up, an overall deadline per request, a
 * size cap on buffered answers, TLS verification pinned on, a garbage CA file refused, the TLS hint.
 * Raw node:http(s) servers on 127.0.0.1 where nock cannot express the behaviour (a trickling body, TLS).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import nock from 'nock';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { describeTlsFailure } from '../../src/api/classify.js';
import {
  createConnection,
  exportConnections,
  getConnectionByName,
  isAddressableName,
} from '../../src/api/connections.js';
import { ApiError, ConfigError, UnaddressableNameError, UnavailableError } from '../../src/errors.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { BASE, collect, makeClient, rejectionOf } from './client-fixture.js';

const fixtures = join(import.meta.dirname, 'fixtures');
const servers: Server[] = [];

afterEach(async () => {
  nock.cleanAll();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

beforeAll(() => {
  nock.disableNetConnect();
  nock.enableNetConnect('127.0.0.1');
});

async function listen(server: Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return (server.address() as AddressInfo).port;
}

/** A server that sends the headers and then one byte per `everyMs`, never ending the body. */
function trickling(first: string): Server {
  return createHttpServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write(first);
    const timer = setInterval(() => res.write(' '), 20);
    res.on('close', () => clearInterval(timer));
  });
}

describe('names that cannot be looked up', () => {
  it('isAddressableName refuses ".", ".." and the empty name only', () => {
    expect(['.', '..', ''].map(isAddressableName)).toEqual([false, false, false]);
    expect(['a', '...', '.a', 'a.b'].map(isAddressableName)).toEqual([true, true, true, true]);
  });

  it('creating "." is refused before any POST, with a definite (non-transient) typed error', async () => {
    // No interceptor: any request would fail the test with a nock "no match" network error.
    const { client } = makeClient();
    const error = await rejectionOf(createConnection(client, { name: '.', type: 's3' }));
    expect(error).toBeInstanceOf(UnaddressableNameError);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).isTransient()).toBe(false);
    expect((error as ApiError).http.serviceMessage).toMatch(/cannot be used/);
  });

  it('a look-up of ".." is an error, not "absent"', async () => {
    // Today's behaviour: the URL is normalised, the service answers 404 for another path: "absent".
    nock(BASE).get(/.*/).reply(404, { error: 'Not found' });
    const { client } = makeClient();
    const error = await rejectionOf(getConnectionByName(client, '..'));
    expect(error).toBeInstanceOf(UnaddressableNameError);
  });
});

describe('an overall deadline per request', () => {
  it('a JSON body that trickles fails at the deadline (not retried), although bytes keep coming', async () => {
    const port = await listen(trickling('{"data":'));
    const { client } = makeClient(
      { url: `http://127.0.0.1:${port}`, insecureHttp: true },
      { deadlineMs: 300 },
    );
    const error = await rejectionOf(
      client.request({ method: 'GET', path: '/ds-connections', retry: 'safe' }),
    );
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).networkCode).toBe('E_DEADLINE');
    expect((error as UnavailableError).message).toMatch(/deadline/);
  });

  it('a streamed export that trickles fails at the stream deadline', async () => {
    const port = await listen(trickling('[{"name":"a"}'));
    const { client } = makeClient(
      { url: `http://127.0.0.1:${port}`, insecureHttp: true },
      { streamDeadlineMs: 400 },
    );
    const error = await rejectionOf(collect(exportConnections(client)));
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).networkCode).toBe('E_DEADLINE');
  });
});

describe('JSON nested too deeply to use (the walkers that compare and mask recurse)', () => {
  const deep = (depth: number) => `${'{"a":'.repeat(depth)}{}${'}'.repeat(depth)}`;

  it('an answer nested more than 1064 levels deep is refused with one clear error, not a stack overflow, and not asked again', async () => {
    const scope = nock(BASE)
      .get('/api/v1/ds-connections')
      .once()
      .reply(200, deep(6000), { 'Content-Type': 'application/json' });
    const { client } = makeClient();
    const error = await rejectionOf(
      client.request({ method: 'GET', path: '/ds-connections', retry: 'safe' }),
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toMatch(/JSON nested more than 1064 levels deep/);
    expect((error as ApiError).isTransient()).toBe(false);
    expect(scope.isDone()).toBe(true);
  });

  it('the same answer to a write leaves it in doubt (applied, maybe): transient, so a create is looked up', async () => {
    nock(BASE).post('/api/v1/ds_connections').reply(200, deep(6000), { 'Content-Type': 'application/json' });
    const { client } = makeClient();
    const error = await rejectionOf(
      client.request({
        method: 'POST',
        path: '/ds_connections',
        body: { ds_connection: {} },
        retry: 'never',
      }),
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).isTransient()).toBe(true);
  });

  it('one 1064 levels deep (a connection 1000 deep in an answer) is read as usual', async () => {
    nock(BASE).get('/api/v1/ds-connections').reply(200, deep(1063), { 'Content-Type': 'application/json' });
    const { client } = makeClient();
    const value = await client.request({ method: 'GET', path: '/ds-connections', retry: 'never' });
    expect(typeof value).toBe('object');
  });

  it('an export element nested too deeply ends the export with one clear error', async () => {
    nock(BASE)
      .get('/api/v1/ds-connections/file-download/export')
      .reply(200, `[{"name":"ok","type":"s3"},{"name":"deep","type":"s3","x":${deep(6000)}}]`, {
        'Content-Type': 'application/json',
      });
    const { client } = makeClient();
    const error = await rejectionOf(collect(exportConnections(client)));
    expect((error as Error).message).toMatch(/element 1 of the export is nested more than 1000 levels deep/);
  });
});

describe('a size cap on buffered answers (decoded bytes)', () => {
  it('a gzip body that expands past the cap is refused with a clear error, once', async () => {
    const big = JSON.stringify({ data: { ds_connections: [], pad: 'x'.repeat(2_000_000) } });
    const zipped = gzipSync(big);
    expect(zipped.length).toBeLessThan(100_000);
    const scope = nock(BASE)
      .get('/api/v1/ds-connections')
      .once()
      .reply(200, zipped, { 'Content-Encoding': 'gzip', 'Content-Type': 'application/json' });
    const { client } = makeClient({}, { maxResponseBytes: 1_000_000 });
    const error = await rejectionOf(
      client.request({ method: 'GET', path: '/ds-connections', retry: 'safe' }),
    );
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).message).toMatch(/larger than the 1000000-byte cap/);
    expect((error as ApiError).isTransient()).toBe(false);
    expect(scope.isDone()).toBe(true);
  });

  it('an answer under the cap is read as usual', async () => {
    nock(BASE).get('/api/v1/ds-connections').reply(200, { ok: 1 });
    const { client } = makeClient({}, { maxResponseBytes: 1000 });
    await expect(client.request({ method: 'GET', path: '/ds-connections', retry: 'safe' })).resolves.toEqual({
      ok: 1,
    });
  });
});

describe('TLS', () => {
  async function selfSigned(): Promise<number> {
    const server = createHttpsServer(
      {
        key: readFileSync(join(fixtures, 'self-signed-test.key')),
        cert: readFileSync(join(fixtures, 'self-signed-test.crt')),
      },
      (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end('{"ok":1}');
      },
    );
    return listen(server as unknown as Server);
  }

  it('verification stays on with NODE_TLS_REJECT_UNAUTHORIZED=0, and the error hints at --ca-file', async () => {
    const port = await selfSigned();
    const saved = process.env.NODE_TLS_REJECT_UNAUTHORIZED;
    process.env.NODE_TLS_REJECT_UNAUTHORIZED = '0';
    // Node warns once that the variable switches verification off; it is expected here, not printed.
    const warned = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      const { client } = makeClient({ url: `https://127.0.0.1:${port}` });
      const error = await rejectionOf(client.request({ method: 'GET', path: '/x', retry: 'safe' }));
      expect(error).toBeInstanceOf(UnavailableError);
      expect((error as UnavailableError).hint).toMatch(/--ca-file/);
      expect((error as UnavailableError).message).toMatch(/securely: the certificate is not trusted/);
      expect((error as UnavailableError).inDoubt).toBe(false);
      client.close();
    } finally {
      warned.mockRestore();
      if (saved === undefined) delete process.env.NODE_TLS_REJECT_UNAUTHORIZED;
      else process.env.NODE_TLS_REJECT_UNAUTHORIZED = saved;
    }
  });

  it('the same server is trusted with its certificate as --ca-file', async () => {
    const port = await selfSigned();
    const { client } = makeClient({
      url: `https://127.0.0.1:${port}`,
      caFile: join(fixtures, 'self-signed-test.crt'),
    });
    await expect(client.request({ method: 'GET', path: '/x', retry: 'safe' })).resolves.toEqual({ ok: 1 });
    client.close();
  });

  it('a CA file that holds no certificate is refused when the client is created, naming the file', async () => {
    const dir = await makeTempDir('ca-');
    const file = join(dir, 'garbage.pem');
    writeFileSync(file, 'this is not a certificate\n');
    let error: unknown;
    try {
      makeClient({ caFile: file });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).exitCode).toBe(2);
    expect((error as ConfigError).message).toContain(file);
  });
});

describe('one definition of transient', () => {
  it('a 501 is definite for a read (not retried) and for a create (isTransient false)', async () => {
    const scope = nock(BASE)
      .get('/api/v1/ds-connections')
      .once()
      .reply(501, { error: 'not implemented' })
      .post('/api/v1/ds_connections')
      .once()
      .reply(501, { error: 'not implemented' });
    const { client, sleeps } = makeClient();
    const read = await rejectionOf(client.request({ method: 'GET', path: '/ds-connections', retry: 'safe' }));
    const create = await rejectionOf(createConnection(client, { name: 'a', type: 's3' }));
    expect(read).toBeInstanceOf(ApiError);
    expect((create as ApiError).isTransient()).toBe(false);
    expect(new ApiError({ method: 'GET', path: '/x', status: 501 }).isTransient()).toBe(false);
    expect(sleeps).toEqual([]);
    expect(scope.isDone()).toBe(true);
  });

  it('a 429 to a create carries its Retry-After on the error, and the client hook does not hear it', async () => {
    nock(BASE).post('/api/v1/ds_connections').reply(429, { error: 'slow down' }, { 'Retry-After': '7' });
    const heard: (number | undefined)[] = [];
    const { client } = makeClient({}, { onRateLimited: (ms) => heard.push(ms) });
    const error = await rejectionOf(createConnection(client, { name: 'a', type: 's3' }));
    expect((error as ApiError).retryAfterMs).toBe(7000);
    expect(heard).toEqual([]);
  });
});

describe('Ctrl-C and a create in flight', () => {
  it('a create answered after the client signal fired still returns its answer (the importer journals it)', async () => {
    const controller = new AbortController();
    nock(BASE)
      .post('/api/v1/ds_connections')
      .reply(() => {
        controller.abort();
        return [201, { status: 'success', data: { _id: 'id-a', name: 'a' } }];
      });
    const { client } = makeClient({}, { signal: controller.signal });
    await expect(createConnection(client, { name: 'a', type: 's3' })).resolves.toEqual({
      name: 'a',
      _id: 'id-a',
    });
  });
});

describe('a TLS failure in words', () => {
  it('each known failure says what and what to do, in one line with no OpenSSL text', () => {
    const url = 'https://dds.example:8443';
    expect(describeTlsFailure('EPROTO', url)?.hint).toContain('use http://dds.example:8443');
    expect(describeTlsFailure('EPROTO', 'http://dds.example')).toBeUndefined();
    expect(describeTlsFailure('DEPTH_ZERO_SELF_SIGNED_CERT', url)?.hint).toMatch(/--ca-file/);
    expect(describeTlsFailure('UNABLE_TO_VERIFY_LEAF_SIGNATURE', url)?.what).toMatch(/not trusted/);
    expect(describeTlsFailure('CERT_HAS_EXPIRED', url)?.what).toMatch(/expired/);
    expect(describeTlsFailure('ERR_TLS_CERT_ALTNAME_INVALID', url)?.what).toMatch(/another host name/);
    expect(describeTlsFailure('ECONNREFUSED', url)).toBeUndefined();
  });
});
