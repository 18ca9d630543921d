/**
 * Conformance: faults on the change routes (PUT, DELETE, connection test), and the body faults for
 * client hardening: `trickle`, `oversize`, `oversize-gzip`.
 */
import { request } from 'node:http';
import { createGunzip } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseFaults, type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { clientFor, obj } from './raw-http.js';

const pg = {
  name: 'orders-pg',
  type: 'rdb-postgresql',
  rdb_url: 'pg.internal:5432',
  rdb_name: 'orders',
  username: 'dds',
  password: 'Stored-1!',
};

/** GET `path` and report the raw answer: chunk count, bytes on the wire, and the (gunzipped) body size. */
function fetchRaw(
  baseUrl: string,
  token: string,
  path: string,
): Promise<{ status: number; headers: Record<string, unknown>; chunks: number; wire: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, baseUrl),
      { headers: { authorization: token }, agent: false },
      (res) => {
        let chunks = 0;
        let wire = 0;
        const parts: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          chunks++;
          wire += c.length;
        });
        const source = res.headers['content-encoding'] === 'gzip' ? res.pipe(createGunzip()) : res;
        source.on('data', (c: Buffer) => parts.push(c));
        source.on('error', reject);
        source.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            chunks,
            wire,
            body: Buffer.concat(parts),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('faults on the change routes', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof clientFor>;
  beforeEach(async () => {
    emu = await startEmulator({ data: { connections: [pg] }, seed: 9 });
    api = clientFor(emu.url, emu.token);
  });
  afterEach(() => emu.close());
  const url = '/api/v1/ds_connections/orders-pg';

  it('commit-then-drop on PUT: the update is applied once though the client saw no answer', async () => {
    emu.setFaults('commit-then-drop@PUT:/ds_connections/*');
    await expect(api.put(url, { ds_connection: { ...pg, rdb_name: 'v2' } })).rejects.toThrow(
      /socket hang up|ECONNRESET/,
    );
    expect(emu.store.getConnection('orders-pg')!.rdb_name).toBe('v2');
    expect(emu.record.changeCount('orders-pg', 'update')).toBe(1);
    expect(emu.record.requests.at(-1)).toMatchObject({
      method: 'PUT',
      status: null,
      fault: 'commit-then-drop',
      applied: true,
    });
  });

  it('commit-then-500 on PUT and DELETE: applied, then answered 500', async () => {
    emu.setFaults('commit-then-500@PUT:*,commit-then-500@DELETE:*');
    const put = await api.put(url, { ds_connection: { ...pg, rdb_name: 'v3' } });
    expect(put.status).toBe(500);
    expect(emu.store.getConnection('orders-pg')!.rdb_name).toBe('v3');
    const del = await api.del(url);
    expect(del.status).toBe(500);
    expect(obj(del).errors[0].code).toBe('INTERNAL_ERROR');
    expect(emu.store.getConnection('orders-pg')).toBeUndefined();
    expect(emu.record.requests.map((r) => [r.method, r.fault, r.applied])).toEqual([
      ['PUT', 'commit-then-500', true],
      ['DELETE', 'commit-then-500', true],
    ]);
  });

  it('commit-then-drop on DELETE: removed; the retry answers 400 "Unable to locate"', async () => {
    emu.setFaults('commit-then-drop@DELETE:*');
    await expect(api.del(url)).rejects.toThrow(/socket hang up|ECONNRESET/);
    emu.setFaults([]);
    const again = await api.del(url);
    expect(again.status).toBe(400);
    expect(obj(again).error).toContain('Unable to locate');
    expect(emu.record.changeCount('orders-pg', 'delete')).toBe(1);
  });

  it('500, reset and 429 before applying on PUT, DELETE and the connection test', async () => {
    emu.setFaults('500@PUT:*,reset@DELETE:*,429=2@POST:/ds-connection-test');
    expect((await api.put(url, { ds_connection: { ...pg, rdb_name: 'no' } })).status).toBe(500);
    await expect(api.del(url)).rejects.toThrow(/ECONNRESET|socket hang up/);
    const t = await api.post('/api/v1/ds-connection-test', { ds_connection: pg, isNewPassword: false });
    expect(t.status).toBe(429);
    expect(t.headers['retry-after']).toBe('2');
    expect(emu.store.getConnection('orders-pg')).toMatchObject({ rdb_name: 'orders' });
    expect(emu.record.changeCount('orders-pg')).toBe(0);
  });

  it('commit-then-500 on the connection test: the outcome is stored', async () => {
    emu.setFaults('commit-then-500@/ds-connection-test');
    const t = await api.post('/api/v1/ds-connection-test', { ds_connection: pg, isNewPassword: false });
    expect(t.status).toBe(500);
    expect(emu.store.getConnection('orders-pg')!.connectionStatusTest).toMatchObject({ is_success: true });
  });
});

describe('body fault syntax', () => {
  it('parses the new kinds with their values', () => {
    expect(parseFaults('trickle=5@GET:*,oversize=0.5:10%,oversize-gzip=64')).toEqual([
      { kind: 'trickle', probability: 1, method: 'GET', path: '*', value: 5 },
      { kind: 'oversize', probability: 0.1, method: '*', path: '*', value: 0.5 },
      { kind: 'oversize-gzip', probability: 1, method: '*', path: '*', value: 64 },
    ]);
  });
});

describe('body faults', () => {
  let emu: RunningEmulator;
  afterEach(() => emu.close());

  it('trickle: the normal answer, byte by byte, and the request is applied', async () => {
    emu = await startEmulator({ data: { connections: [pg] }, faults: 'trickle=1@*' });
    const api = clientFor(emu.url, emu.token);
    const plain = await fetchRaw(emu.url, emu.token, '/api/v1/ds_connections/orders-pg');
    expect(plain.status).toBe(200);
    const parsed = JSON.parse(plain.body.toString('utf8'));
    expect(parsed.data.ds_connection).toMatchObject({ name: 'orders-pg', password: '******' });
    expect(Number(plain.headers['content-length'])).toBe(plain.wire);
    // One byte per write: the client sees many small chunks (how many it merges is the kernel's).
    expect(plain.chunks).toBeGreaterThan(1);
    const del = await api.del('/api/v1/ds_connections/orders-pg');
    expect(del.status).toBe(200);
    expect(emu.store.getConnection('orders-pg')).toBeUndefined();
    expect(emu.record.requests.at(-1)).toMatchObject({ fault: 'trickle', applied: true, status: 200 });
  });

  it('oversize: 200 with a valid JSON body of the given size and its content-length; nothing applied', async () => {
    emu = await startEmulator({ data: { connections: [pg] }, faults: 'oversize=2' });
    const r = await fetchRaw(emu.url, emu.token, '/api/v1/ds-connections');
    expect(r.status).toBe(200);
    expect(r.body.length).toBeGreaterThanOrEqual(2 * 1024 * 1024);
    expect(Number(r.headers['content-length'])).toBe(r.body.length);
    expect(JSON.parse(r.body.toString('utf8')).data.padding).toHaveLength(2 * 1024 * 1024);
    const api = clientFor(emu.url, emu.token);
    await api.del('/api/v1/ds_connections/orders-pg').catch(() => undefined);
    expect(emu.store.getConnection('orders-pg')).toBeDefined();
    expect(emu.record.requests.at(-1)).toMatchObject({ fault: 'oversize', applied: false });
  });

  it('oversize-gzip: a small gzip stream that inflates to a huge valid JSON body', async () => {
    emu = await startEmulator({ faults: 'oversize-gzip=16@GET:*' });
    const r = await fetchRaw(emu.url, emu.token, '/api/v1/ds-connections');
    expect(r.status).toBe(200);
    expect(r.headers['content-encoding']).toBe('gzip');
    expect(r.headers['content-length']).toBeUndefined();
    expect(r.body.length).toBeGreaterThanOrEqual(16 * 1024 * 1024);
    expect(r.wire * 500).toBeLessThan(r.body.length);
    expect(JSON.parse(r.body.toString('utf8'))).toEqual({
      status: 'success',
      statusCode: 200,
      data: {},
      message: null,
    });
  });

  it('oversize: a client that stops reading ends the stream (the server does not keep producing)', async () => {
    emu = await startEmulator({ faults: 'oversize-gzip' });
    await new Promise<void>((resolve, reject) => {
      const req = request(new URL('/api/v1/ds-connections', emu.url), {
        headers: { authorization: emu.token },
        agent: false,
      });
      req.on('response', (res) => {
        res.once('data', () => {
          req.destroy();
          resolve();
        });
      });
      req.on('error', (e) => (req.destroyed ? undefined : reject(e)));
      req.end();
    });
    // The server is still serving: a normal request answers.
    emu.setFaults([]);
    expect((await clientFor(emu.url, emu.token).get('/api/v1/ds-connections')).status).toBe(200);
  });
});
