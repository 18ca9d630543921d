/** Conformance: authentication (spec 5, api-notes) and the error shapes of spec 7. */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { obj, send } from './raw-http.js';

describe('authentication', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator({ token: 'api-key-1', userToken: 'user-token-1', sessionTtlMs: 300 });
  });
  afterAll(() => emu.close());
  // Session lifetimes are read from Date: only Date is faked, so a session lives until a test moves the
  // clock, however slow the machine (the server's sockets and timers stay real).
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('answers 401 with plain text (or empty) when the Authorization header is absent', async () => {
    const r = await send(emu.url, 'GET', '/api/v1/ds-connections', { auth: null });
    expect(r.status).toBe(401);
    expect(r.json).toBeUndefined();
    expect(r.headers['content-type'] ?? 'text/plain').toMatch(/text\/plain/);
  });

  it('answers 401 to a wrong key, on every endpoint', async () => {
    for (const [method, path] of [
      ['GET', '/api/v1/ds-connections'],
      ['GET', '/api/v1/ds-connections/file-download/export'],
      ['POST', '/api/v1/ds_connections'],
      ['POST', '/api/v1/scanProfiles'],
      ['GET', '/api/v1/scanProfiles/0123456789abcdef01234567'],
      ['GET', '/api/v1/actionable-insights/all-cases'],
      ['PATCH', '/api/v1/actionable-insights/cases:update'],
      ['PATCH', '/api/v1/actionable-insights/case-status/x'],
      ['GET', '/api/v1/ds-connections-types/template/s3'],
    ] as const) {
      const r = await send(emu.url, method, path, {
        auth: 'Bearer wrong',
        body: method === 'GET' ? undefined : {},
      });
      expect(r.status, `${method} ${path}`).toBe(401);
    }
  });

  it('accepts "Bearer <key>" (spec) and the raw key (real clients)', async () => {
    expect((await send(emu.url, 'GET', '/api/v1/ds-connections', { auth: 'Bearer api-key-1' })).status).toBe(
      200,
    );
    expect((await send(emu.url, 'GET', '/api/v1/ds-connections', { auth: 'api-key-1' })).status).toBe(200);
  });

  it('exchanges a user token for a JWT-shaped session token with exp', async () => {
    for (const auth of ['user-token-1', 'Bearer user-token-1']) {
      const r = await send(emu.url, 'GET', '/api/v1/refresh-access-token', { auth });
      expect(r.status).toBe(200);
      expect(obj(r).success).toBe(true);
      const token = obj(r).systemToken as string;
      const parts = token.split('.');
      expect(parts).toHaveLength(3);
      const payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
      expect(payload.exp).toEqual(expect.any(Number));
      expect((await send(emu.url, 'GET', '/api/v1/ds-connections', { auth: token })).status).toBe(200);
    }
  });

  it('answers a bad user token with HTTP 200 and success:false', async () => {
    for (const auth of ['nope', null, 'api-key-1']) {
      const r = await send(emu.url, 'GET', '/api/v1/refresh-access-token', { auth });
      expect(r.status).toBe(200);
      expect(obj(r).success).toBe(false);
      expect(typeof obj(r).message).toBe('string');
    }
  });

  it('refuses an expired session token with 401; a re-exchange works again', async () => {
    const first = obj(
      await send(emu.url, 'GET', '/api/v1/refresh-access-token', { auth: 'user-token-1' }),
    ).systemToken;
    expect((await send(emu.url, 'GET', '/api/v1/ds-connections', { auth: `Bearer ${first}` })).status).toBe(
      200,
    );
    vi.setSystemTime(Date.now() + 299);
    expect((await send(emu.url, 'GET', '/api/v1/ds-connections', { auth: `Bearer ${first}` })).status).toBe(
      200,
    );
    vi.setSystemTime(Date.now() + 1);
    expect((await send(emu.url, 'GET', '/api/v1/ds-connections', { auth: `Bearer ${first}` })).status).toBe(
      401,
    );
    const second = obj(
      await send(emu.url, 'GET', '/api/v1/refresh-access-token', { auth: 'user-token-1' }),
    ).systemToken;
    expect((await send(emu.url, 'GET', '/api/v1/ds-connections', { auth: `Bearer ${second}` })).status).toBe(
      200,
    );
  });

  it('refuses a forged token that merely looks like a JWT', async () => {
    const forged = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"exp":9999999999}').toString('base64url')}.x`;
    expect((await send(emu.url, 'GET', '/api/v1/ds-connections', { auth: forged })).status).toBe(401);
  });
});

describe('errors (spec section 7)', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(() => emu.close());
  const auth = () => `Bearer ${emu.token}`;

  it('200: operation result', async () => {
    expect(
      (await send(emu.url, 'GET', '/api/v1/actionable-insights/all-cases', { auth: auth() })).status,
    ).toBe(200);
  });

  it('400: {error} for a malformed identifier', async () => {
    const r = await send(emu.url, 'GET', '/api/v1/scanProfiles/not-an-id', { auth: auth() });
    expect(r.status).toBe(400);
    expect(Object.keys(obj(r))).toEqual(['error']);
    expect(typeof obj(r).error).toBe('string');
  });

  it('404: {error} for an unknown identifier and for an unknown route', async () => {
    for (const path of [
      '/api/v1/scanProfiles/0123456789abcdef01234567',
      '/api/v1/no-such-thing',
      '/api/v2/ds-connections',
    ]) {
      const r = await send(emu.url, 'GET', path, { auth: auth() });
      expect(r.status, path).toBe(404);
      expect(typeof obj(r).error).toBe('string');
    }
  });

  it('500: {status, message, errors: [objects]}', async () => {
    emu.setFaults('500');
    try {
      const r = await send(emu.url, 'GET', '/api/v1/ds-connections', { auth: auth() });
      expect(r.status).toBe(500);
      const body = obj(r);
      expect(typeof body.status).toBe('string');
      expect(typeof body.message).toBe('string');
      expect(Array.isArray(body.errors)).toBe(true);
      expect(typeof body.errors[0]).toBe('object');
    } finally {
      emu.setFaults([]);
    }
  });

  it('400: {error} for a body sent without Content-Type: application/json (spec 5.3)', async () => {
    const body = { ds_connection: { name: 'no-ct', type: 'custom' } };
    const r = await send(emu.url, 'POST', '/api/v1/ds_connections', {
      auth: auth(),
      body,
      headers: { 'content-type': 'text/plain' },
    });
    expect(r.status).toBe(400);
    expect(typeof obj(r).error).toBe('string');
    const ok = await send(emu.url, 'POST', '/api/v1/ds_connections', {
      auth: auth(),
      body,
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(ok.status).toBe(200);
  });

  it('can label JSON bodies text/html, as some deployments do', async () => {
    const html = await startEmulator({ htmlContentType: true });
    try {
      const r = await send(html.url, 'GET', '/api/v1/ds-connections', { auth: `Bearer ${html.token}` });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toMatch(/text\/html/);
      expect(obj(r).data.ds_connections).toEqual([]);
    } finally {
      await html.close();
    }
  });
});
