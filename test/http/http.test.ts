import { getEventListeners } from 'node:events';
import { createRequire } from 'node:module';
import { PassThrough } from 'node:stream';
import { inspect } from 'node:util';
import nock from 'nock';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HttpClient } from '../../src/api/http.js';
import {
  computeRetryDelay,
  createRetryBudget,
  DEFAULT_RETRY_POLICY,
  parseRetryAfter,
} from '../../src/api/retry-policy.js';
import { extractServiceMessage } from '../../src/api/service-error.js';
import { ApiError, AuthError, InterruptedError, UnavailableError } from '../../src/errors.js';
import { BASE, makeClient, networkError, rejectionOf, TOKEN } from './client-fixture.js';

afterEach(() => {
  nock.cleanAll();
});

const LIST = '/api/v1/ds-connections';

/** The safe GET most tests send (nock answers it on {@link LIST}). */
const getList = (client: HttpClient) =>
  client.request({ method: 'GET', path: '/ds-connections', retry: 'safe' });

describe('loading the client', () => {
  it("leaves Node's fetch globals in place (hidden only while axios loads)", () => {
    // client-fixture.js has loaded src/api/http.ts by now.
    for (const name of ['FormData', 'Request', 'Response', 'ReadableStream']) {
      expect(typeof (globalThis as Record<string, unknown>)[name], name).toBe('function');
    }
    expect(new Response('{}').headers).toBeInstanceOf(Headers);
  });

  it('leaves form-data, https-proxy-agent and follow-redirects to whoever requires them next (stood in only while axios loads)', () => {
    const fromAxios = createRequire(createRequire(import.meta.url).resolve('axios'));
    expect(typeof (fromAxios('form-data') as { prototype: { append?: unknown } }).prototype.append).toBe(
      'function',
    );
    expect(typeof (fromAxios('https-proxy-agent') as { HttpsProxyAgent?: unknown }).HttpsProxyAgent).toBe(
      'function',
    );
    expect(typeof (fromAxios('follow-redirects') as { http?: { request?: unknown } }).http?.request).toBe(
      'function',
    );
  });
});

describe('authorization header', () => {
  it('sends Bearer <token> by default', async () => {
    const scope = nock(BASE, { reqheaders: { authorization: `Bearer ${TOKEN}` } })
      .get(LIST)
      .reply(200, { ok: 1 });
    const { client } = makeClient();
    await expect(getList(client)).resolves.toEqual({
      ok: 1,
    });
    scope.done();
  });

  it('sends the token alone with authScheme raw', async () => {
    const scope = nock(BASE, { reqheaders: { authorization: TOKEN } })
      .get(LIST)
      .reply(200, { ok: 2 });
    const { client } = makeClient({ authScheme: 'raw' });
    await expect(getList(client)).resolves.toEqual({
      ok: 2,
    });
    scope.done();
  });

  it('sends JSON bodies with Content-Type application/json', async () => {
    const scope = nock(BASE, { reqheaders: { 'content-type': 'application/json' } })
      .patch('/api/v1/x', { a: 'yes' })
      .reply(200, '');
    const { client } = makeClient();
    await expect(
      client.request({ method: 'PATCH', path: '/x', body: { a: 'yes' }, retry: 'safe' }),
    ).resolves.toBe(undefined);
    scope.done();
  });
});

describe('bodies are parsed by content', () => {
  it('parses JSON labelled text/html', async () => {
    nock(BASE).get(LIST).reply(200, '{"data":{"ds_connections":[]}}', { 'Content-Type': 'text/html' });
    const { client } = makeClient();
    await expect(getList(client)).resolves.toEqual({
      data: { ds_connections: [] },
    });
  });

  it('treats an HTML page with a 200 as a 502 and retries a safe request', async () => {
    nock(BASE)
      .get(LIST)
      .reply(200, '<html><head><title>502 Bad Gateway</title></head></html>', { 'Content-Type': 'text/html' })
      .get(LIST)
      .reply(200, { fine: true });
    const { client, sleeps } = makeClient();
    await expect(getList(client)).resolves.toEqual({
      fine: true,
    });
    expect(sleeps).toHaveLength(1);
  });

  it('reports an HTML 200 on a never-retried request as a transient 502 ApiError', async () => {
    nock(BASE)
      .post('/api/v1/ds_connections')
      .reply(200, '<html><body><h1>502 Bad Gateway</h1></body></html>');
    const { client } = makeClient();
    const error = await rejectionOf(
      client.request({ method: 'POST', path: '/ds_connections', body: {}, retry: 'never' }),
    );
    expect(error).toBeInstanceOf(ApiError);
    const api = error as ApiError;
    expect(api.status).toBe(502);
    expect(api.isTransient()).toBe(true);
    expect(api.message).toContain('502 Bad Gateway');
  });

  it('treats success:false at HTTP 200 as an error and does not retry it', async () => {
    const scope = nock(BASE).get(LIST).reply(200, { success: false, message: 'filter is invalid' });
    const { client, sleeps } = makeClient();
    const error = await rejectionOf(getList(client));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).http.serviceMessage).toBe('filter is invalid');
    expect(sleeps).toEqual([]);
    scope.done();
  });

  it('treats status:"error" at HTTP 200 as an error with the body statusCode', async () => {
    nock(BASE).get(LIST).reply(200, { status: 'error', statusCode: 400, message: 'bad sort' });
    const { client } = makeClient();
    const error = (await rejectionOf(getList(client))) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(400);
    expect(error.message).toBe('GET /api/v1/ds-connections -> 400: bad sort');
  });
});

describe('error rows of spec section 7', () => {
  it('400 {error}: ApiError (exit 1) with method, path without query, status and message; not retried', async () => {
    nock(BASE).get('/api/v1/scanProfiles/zz').query(true).reply(400, { error: 'Invalid scan id' });
    const { client, sleeps } = makeClient();
    const error = (await rejectionOf(
      client.request({ method: 'GET', path: '/scanProfiles/zz', query: { q: 'secret-ish' }, retry: 'safe' }),
    )) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.exitCode).toBe(1);
    expect(error.http).toEqual({
      method: 'GET',
      path: '/api/v1/scanProfiles/zz',
      status: 400,
      serviceMessage: 'Invalid scan id',
    });
    expect(error.message).not.toContain('secret-ish');
    expect(sleeps).toEqual([]);
  });

  it('401 plain text: AuthError (exit 4), not retried', async () => {
    const scope = nock(BASE).get(LIST).reply(401, 'Unauthorized');
    const { client } = makeClient();
    const error = (await rejectionOf(getList(client))) as AuthError;
    expect(error).toBeInstanceOf(AuthError);
    expect(error.exitCode).toBe(4);
    expect(error.http?.status).toBe(401);
    scope.done();
  });

  it('401 empty body: AuthError', async () => {
    nock(BASE).get(LIST).reply(401);
    const { client } = makeClient();
    await expect(getList(client)).rejects.toBeInstanceOf(AuthError);
  });

  it('404 {error}: ApiError 404, not retried', async () => {
    nock(BASE).get('/api/v1/scanProfiles/abc').reply(404, { error: 'Scan profile not found' });
    const { client, sleeps } = makeClient();
    const error = (await rejectionOf(
      client.request({ method: 'GET', path: '/scanProfiles/abc', retry: 'safe' }),
    )) as ApiError;
    expect(error.status).toBe(404);
    expect(error.http.serviceMessage).toBe('Scan profile not found');
    expect(sleeps).toEqual([]);
  });

  it('500 {status, message, errors[]}: retried, then UnavailableError (exit 5) keeping the last status and message', async () => {
    const body = { status: 'error', message: 'Internal error', errors: [{ message: 'db down' }] };
    const scope = nock(BASE)
      .get(LIST)
      .times(DEFAULT_RETRY_POLICY.retries + 1)
      .reply(500, body);
    const { client, sleeps } = makeClient();
    const error = (await rejectionOf(getList(client))) as UnavailableError;
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.exitCode).toBe(5);
    expect(error.http?.status).toBe(500);
    expect(error.http?.serviceMessage).toBe('Internal error; db down');
    expect(error.message).toContain(`after ${DEFAULT_RETRY_POLICY.retries + 1} attempts`);
    expect(sleeps).toHaveLength(DEFAULT_RETRY_POLICY.retries);
    scope.done();
  });

  it('500 then 200: a safe request succeeds after one retry', async () => {
    nock(BASE).get(LIST).reply(500, { message: 'x' }).get(LIST).reply(200, { ok: true });
    const { client, sleeps } = makeClient();
    await expect(getList(client)).resolves.toEqual({
      ok: true,
    });
    expect(sleeps).toEqual([125]);
  });

  it.each([408, 429, 502, 503, 504])('%i is retried for a safe request', async (status) => {
    nock(BASE).get(LIST).reply(status, { message: 'busy' }).get(LIST).reply(200, { ok: status });
    const { client } = makeClient();
    await expect(getList(client)).resolves.toEqual({
      ok: status,
    });
  });

  it('403 says what to do: the token was accepted, its user may not do this', async () => {
    nock(BASE).get(LIST).reply(403, { error: 'Forbidden' });
    const { client } = makeClient();
    const error = (await getList(client).catch((e: unknown) => e)) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.toUserLine()).toMatch(/was accepted but may not do this: check the permissions of its user/);
  });

  it.each([400, 403, 404, 409, 422, 501])('%i is not retried', async (status) => {
    const scope = nock(BASE).get(LIST).reply(status, { error: 'no' });
    const { client, sleeps } = makeClient();
    await expect(getList(client)).rejects.toBeInstanceOf(ApiError);
    expect(sleeps).toEqual([]);
    scope.done();
  });
});

describe('retry policy', () => {
  it('uses full-jitter exponential backoff', () => {
    const policy = { ...DEFAULT_RETRY_POLICY, baseDelayMs: 100, maxDelayMs: 1000 };
    expect([0, 1, 2, 3, 4, 5].map((n) => computeRetryDelay(policy, n, undefined, () => 0.999))).toEqual([
      99, 199, 399, 799, 999, 999,
    ]);
    expect(computeRetryDelay(policy, 3, undefined, () => 0)).toBe(0);
  });

  it('honours Retry-After in seconds and tells onRateLimited', async () => {
    const onRateLimited = vi.fn();
    nock(BASE)
      .get(LIST)
      .reply(429, { message: 'slow down' }, { 'Retry-After': '3' })
      .get(LIST)
      .reply(200, {});
    const { client, sleeps } = makeClient({}, { onRateLimited });
    await getList(client);
    expect(sleeps).toEqual([3000]);
    expect(onRateLimited).toHaveBeenCalledWith(3000);
  });

  it('honours Retry-After as an HTTP date', async () => {
    // The clock stands still on a whole second (only Date is faked: nock and sockets keep real timers),
    // so the wait is exactly the 20 s the date names, however long the request took.
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2030-01-01T00:00:00.000Z') });
    try {
      const at = new Date(Date.now() + 20_000).toUTCString();
      nock(BASE).get(LIST).reply(503, {}, { 'Retry-After': at }).get(LIST).reply(200, {});
      const { client, sleeps } = makeClient();
      await getList(client);
      expect(sleeps).toEqual([20_000]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('caps a long Retry-After', async () => {
    nock(BASE).get(LIST).reply(429, {}, { 'Retry-After': '86400' }).get(LIST).reply(200, {});
    const { client, sleeps } = makeClient({}, { retryPolicy: { maxRetryAfterMs: 7_000 } });
    await getList(client);
    expect(sleeps).toEqual([7_000]);
  });

  it('parses Retry-After forms', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('2.5', now)).toBe(2500);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('shares a run-wide retry budget between requests', async () => {
    const budget = createRetryBudget(2);
    nock(BASE).get(LIST).times(3).reply(503, { message: 'down' });
    nock(BASE).get('/api/v1/other').reply(503, { message: 'down' });
    const { client, sleeps } = makeClient({}, { retryBudget: budget });
    const first = (await rejectionOf(getList(client))) as UnavailableError;
    expect(first).toBeInstanceOf(UnavailableError);
    expect(first.message).toContain('retry budget');
    expect(sleeps).toHaveLength(2);
    expect(budget.remaining).toBe(0);
    const second = await rejectionOf(client.request({ method: 'GET', path: '/other', retry: 'safe' }));
    expect(second).toBeInstanceOf(UnavailableError);
    expect(sleeps).toHaveLength(2);
    expect(nock.isDone()).toBe(true);
  });

  it('never retries a POST (retry: never), whatever the failure', async () => {
    const scope = nock(BASE).post('/api/v1/ds_connections').reply(503, { message: 'busy' });
    const spare = nock(BASE).post('/api/v1/ds_connections').reply(200, { name: 'x' });
    const { client, sleeps } = makeClient();
    const error = (await rejectionOf(
      client.request({ method: 'POST', path: '/ds_connections', body: { a: 1 }, retry: 'never' }),
    )) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(503);
    expect(error.isTransient()).toBe(true);
    expect(sleeps).toEqual([]);
    scope.done();
    expect(spare.isDone()).toBe(false);
  });

  it('a reset connection on a POST is an UnavailableError in doubt, sent once', async () => {
    nock(BASE).post('/api/v1/ds_connections').replyWithError(networkError('ECONNRESET', 'socket hang up'));
    const { client, sleeps } = makeClient();
    const error = (await rejectionOf(
      client.request({ method: 'POST', path: '/ds_connections', body: {}, retry: 'never' }),
    )) as UnavailableError;
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.networkCode).toBe('ECONNRESET');
    expect(error.inDoubt).toBe(true);
    expect(sleeps).toEqual([]);
  });

  it('retries network errors of safe requests', async () => {
    nock(BASE)
      .get(LIST)
      .replyWithError(networkError('ECONNRESET', 'socket hang up'))
      .get(LIST)
      .replyWithError(networkError('ETIMEDOUT', 'timeout'))
      .get(LIST)
      .reply(200, { ok: 1 });
    const { client, sleeps } = makeClient();
    await expect(getList(client)).resolves.toEqual({
      ok: 1,
    });
    expect(sleeps).toEqual([125, 250]);
  });

  it('ECONNREFUSED ends after a few quick attempts with an exit-5 error, not in doubt', async () => {
    nock(BASE)
      .get(LIST)
      .times(10)
      .replyWithError(networkError('ECONNREFUSED', 'connect ECONNREFUSED 10.0.0.1:443'));
    const { client, sleeps } = makeClient();
    const error = (await rejectionOf(getList(client))) as UnavailableError;
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.exitCode).toBe(5);
    expect(error.networkCode).toBe('ECONNREFUSED');
    expect(error.inDoubt).toBe(false);
    expect(error.message).toContain('ECONNREFUSED');
    expect(sleeps).toHaveLength(DEFAULT_RETRY_POLICY.refusedRetries);
    expect(sleeps.reduce((a, b) => a + b, 0)).toBeLessThan(3_000);
  });
});

describe('timeouts', () => {
  it('a request that takes longer than its timeout is an UnavailableError in doubt', async () => {
    nock(BASE).get(LIST).delay(500).reply(200, {});
    const { client } = makeClient({}, { retryPolicy: { retries: 0 } });
    const error = (await rejectionOf(
      client.request({ method: 'GET', path: '/ds-connections', retry: 'safe', timeoutMs: 20 }),
    )) as UnavailableError;
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.networkCode).toBe('ETIMEDOUT');
    expect(error.inDoubt).toBe(true);
  });
});

describe('user-token exchange', () => {
  const USER = 'user-token-55aa11';

  it('exchanges lazily before the first request and uses the session token', async () => {
    const scope = nock(BASE)
      .get('/api/v1/refresh-access-token')
      .matchHeader('authorization', USER)
      .reply(200, { success: true, systemToken: 'session-1-abcdef' })
      .get(LIST)
      .times(2)
      .matchHeader('authorization', 'Bearer session-1-abcdef')
      .reply(200, { ok: true });
    const { client } = makeClient({ token: undefined, refreshToken: USER });
    await Promise.all([getList(client), getList(client)]);
    scope.done();
  });

  it('sixteen requests awaiting one exchange on one signal raise no MaxListenersExceededWarning', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const scope = nock(BASE)
        .get('/api/v1/refresh-access-token')
        .delay(50)
        .reply(200, { success: true, systemToken: 'session-16-abcdef' })
        .get(LIST)
        .times(16)
        .matchHeader('authorization', 'Bearer session-16-abcdef')
        .reply(200, { ok: true });
      const run = new AbortController();
      const { client } = makeClient({ token: undefined, refreshToken: USER }, { signal: run.signal });
      const all = Promise.all(Array.from({ length: 16 }, () => getList(client)));
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(getEventListeners(run.signal, 'abort').length).toBeLessThanOrEqual(2);
      await all;
      scope.done();
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('re-exchanges once on a 401, then retries the request', async () => {
    const scope = nock(BASE)
      .get(LIST)
      .matchHeader('authorization', 'Bearer expired-token')
      .reply(401, 'jwt expired')
      .get('/api/v1/refresh-access-token')
      .reply(200, { success: true, systemToken: 'session-2-abcdef' })
      .get(LIST)
      .matchHeader('authorization', 'Bearer session-2-abcdef')
      .reply(200, { ok: 'again' });
    const { client } = makeClient({ token: 'expired-token', refreshToken: USER });
    await expect(getList(client)).resolves.toEqual({
      ok: 'again',
    });
    scope.done();
  });

  it('a 401 after the re-exchange is an AuthError (exit 4), with exactly one re-exchange', async () => {
    const exchange = nock(BASE)
      .get('/api/v1/refresh-access-token')
      .times(2)
      .reply(200, { success: true, systemToken: 'session-3-abcdef' });
    nock(BASE).get(LIST).times(3).reply(401);
    const { client } = makeClient({ token: undefined, refreshToken: USER });
    const error = await rejectionOf(getList(client));
    expect(error).toBeInstanceOf(AuthError);
    expect(exchange.isDone()).toBe(true);
    expect(nock.pendingMocks()).toHaveLength(1);
  });

  it('success:false at HTTP 200 from the exchange is an AuthError', async () => {
    nock(BASE)
      .get('/api/v1/refresh-access-token')
      .reply(200, { success: false, message: 'Invalid refresh token' });
    const { client } = makeClient({ token: undefined, refreshToken: USER });
    const error = (await rejectionOf(getList(client))) as AuthError;
    expect(error).toBeInstanceOf(AuthError);
    expect(error.exitCode).toBe(4);
    expect(error.message).toContain('Invalid refresh token');
  });

  /** A list request stopped by its own signal after `ms`. */
  const listStoppedAfter = (client: HttpClient, ms: number) => {
    const stopped = new AbortController();
    setTimeout(() => stopped.abort(), ms);
    return client.request({ method: 'GET', path: '/ds-connections', retry: 'safe', signal: stopped.signal });
  };
  /** The list, answered `{ ok }` to the session token `token` only. */
  const listFor = (token: string, ok: number) =>
    nock(BASE).get(LIST).matchHeader('authorization', `Bearer ${token}`).reply(200, { ok });

  it('a request stopped while an exchange runs leaves it running for the others (it ran on the first waiter signal)', async () => {
    const exchange = nock(BASE)
      .get('/api/v1/refresh-access-token')
      .delay(150)
      .reply(200, { success: true, systemToken: 'session-4-abcdef' });
    const list = listFor('session-4-abcdef', 4);
    const { client } = makeClient({ token: undefined, refreshToken: USER });
    const first = listStoppedAfter(client, 30);
    const second = getList(client);
    expect(await rejectionOf(first)).toBeInstanceOf(InterruptedError);
    await expect(second).resolves.toEqual({ ok: 4 });
    expect(exchange.isDone()).toBe(true);
    list.done();
  });

  it('an exchange nobody waits for any more is stopped, and the next request exchanges anew', async () => {
    const exchanges = nock(BASE)
      .get('/api/v1/refresh-access-token')
      .delay(300)
      .reply(200, { success: true, systemToken: 'session-5-abcdef' })
      .get('/api/v1/refresh-access-token')
      .reply(200, { success: true, systemToken: 'session-6-abcdef' });
    const list = listFor('session-6-abcdef', 6);
    const { client } = makeClient({ token: undefined, refreshToken: USER });
    expect(await rejectionOf(listStoppedAfter(client, 30))).toBeInstanceOf(InterruptedError);
    await expect(getList(client)).resolves.toEqual({ ok: 6 });
    expect(exchanges.isDone()).toBe(true);
    list.done();
  });

  it('a 401 with no refresh token is final', async () => {
    const scope = nock(BASE).get(LIST).reply(401);
    const spare = nock(BASE)
      .get('/api/v1/refresh-access-token')
      .reply(200, { success: true, systemToken: 'x1234' });
    const { client } = makeClient();
    await expect(getList(client)).rejects.toBeInstanceOf(AuthError);
    scope.done();
    expect(spare.isDone()).toBe(false);
  });
});

describe('abort and hygiene', () => {
  it('an aborted request signal ends with InterruptedError', async () => {
    nock(BASE).get(LIST).delay(2_000).reply(200, {});
    const controller = new AbortController();
    const { client } = makeClient();
    const pending = client.request({
      method: 'GET',
      path: '/ds-connections',
      retry: 'safe',
      signal: controller.signal,
    });
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(InterruptedError);
  });

  it('Ctrl-C (the client signal) ends a safe request in flight that has a signal of its own too', async () => {
    nock(BASE).get(LIST).delay(2_000).reply(200, {});
    const ctrlC = new AbortController();
    const own = new AbortController();
    const { client } = makeClient({}, { signal: ctrlC.signal });
    const pending = client.request({
      method: 'GET',
      path: '/ds-connections',
      retry: 'safe',
      signal: own.signal,
    });
    setTimeout(() => ctrlC.abort(), 20);
    await expect(pending).rejects.toBeInstanceOf(InterruptedError);
  });

  it('Ctrl-C leaves a write in flight to settle, so that its outcome can be recorded', async () => {
    nock(BASE)
      .put('/api/v1/ds_connections/a')
      .delay(200)
      .reply(200, { ds_connection: { name: 'a' } });
    const ctrlC = new AbortController();
    const { client } = makeClient({}, { signal: ctrlC.signal });
    const pending = client.request({
      method: 'PUT',
      path: '/ds_connections/a',
      body: { ds_connection: { name: 'a' } },
      retry: 'safe',
    });
    setTimeout(() => ctrlC.abort(), 20);
    await expect(pending).resolves.toEqual({ ds_connection: { name: 'a' } });
  });

  it('Ctrl-C while a streamed body is read is an interrupt (exit 130), not an unreachable service', async () => {
    nock(BASE)
      .get(LIST)
      .reply(200, () => {
        const body = new PassThrough();
        body.write('[{"name":"a"},');
        return body;
      });
    const ctrlC = new AbortController();
    const { client } = makeClient({}, { signal: ctrlC.signal });
    const stream = await client.requestStream({ method: 'GET', path: '/ds-connections', retry: 'safe' });
    const failed = new Promise<unknown>((resolve) => {
      stream.on('error', resolve);
      stream.resume();
    });
    ctrlC.abort();
    const error = await failed;
    expect(error).toBeInstanceOf(InterruptedError);
    expect((error as InterruptedError).exitCode).toBe(130);
  });

  it('Ctrl-C ends a streamed body being read after its request returned', async () => {
    nock(BASE)
      .get(LIST)
      .reply(200, () => {
        const body = new PassThrough();
        body.write('[{"name":"a"},');
        return body;
      });
    const ctrlC = new AbortController();
    const own = new AbortController();
    const { client } = makeClient({}, { signal: ctrlC.signal });
    const stream = await client.requestStream({
      method: 'GET',
      path: '/ds-connections',
      retry: 'safe',
      signal: own.signal,
    });
    const ended = new Promise<unknown>((resolve) => {
      stream.on('error', resolve);
      stream.on('close', () => resolve('closed'));
      stream.resume();
    });
    ctrlC.abort();
    expect(await ended).toBeDefined();
    expect((stream as PassThrough).destroyed).toBe(true);
  });

  it('leaves no listener on the client signal or a request signal once requests are answered', async () => {
    nock(BASE).get(LIST).times(20).reply(200, {});
    const ctrlC = new AbortController();
    const own = new AbortController();
    const { client } = makeClient({}, { signal: ctrlC.signal });
    for (let i = 0; i < 20; i++)
      await client.request({ method: 'GET', path: '/ds-connections', retry: 'safe', signal: own.signal });
    expect(getEventListeners(ctrlC.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(own.signal, 'abort')).toHaveLength(0);
  });

  it('many requests in flight sharing Ctrl-C and a request signal raise no listener-leak warning', async () => {
    nock(BASE).get(LIST).times(20).delay(30).reply(200, {});
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const ctrlC = new AbortController();
      const own = new AbortController();
      const { client } = makeClient({}, { signal: ctrlC.signal });
      await Promise.all(
        Array.from({ length: 20 }, () =>
          client.request({ method: 'GET', path: '/ds-connections', retry: 'safe', signal: own.signal }),
        ),
      );
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  });

  it('the client signal stops retries', async () => {
    const controller = new AbortController();
    nock(BASE).get(LIST).reply(503, {});
    const { client } = makeClient(
      {},
      {
        signal: controller.signal,
        sleep: async () => {
          controller.abort();
        },
      },
    );
    await expect(getList(client)).rejects.toBeInstanceOf(InterruptedError);
  });

  it('percent-encodes a JSON filter in the query string', async () => {
    const filter = '[{"field":"type","value":["s3"],"operator":"in"}]';
    const scope = nock(BASE)
      .get(LIST)
      .query((q) => q.filter === filter)
      .reply(200, {});
    const { client } = makeClient();
    await client.request({ method: 'GET', path: '/ds-connections', query: { filter }, retry: 'safe' });
    scope.done();
  });

  it('errors carry no axios error, no header and no token', async () => {
    nock(BASE).get(LIST).reply(500, { message: 'boom' });
    nock(BASE).get(LIST).replyWithError(networkError('ECONNRESET', 'socket hang up'));
    const { client } = makeClient({}, { retryPolicy: { retries: 1 } });
    const error = (await rejectionOf(getList(client))) as Error;
    const text = `${inspect(error, { depth: 20, showHidden: true })} ${JSON.stringify(error.cause)}`;
    expect(text).not.toContain(TOKEN);
    expect(text.toLowerCase()).not.toContain('authorization');
    expect(text).not.toMatch(/AxiosError/);
  });

  it('extracts the service message from error, message and errors[]', () => {
    expect(extractServiceMessage({ error: 'e1' })).toBe('e1');
    expect(extractServiceMessage({ message: 'm1', errors: [{ message: 'x' }, 'y'] })).toBe('m1; x; y');
    expect(extractServiceMessage({ status: 'error', message: null })).toBeUndefined();
    expect(extractServiceMessage('<html><title>Bad Gateway</title></html>')).toContain('Bad Gateway');
    expect(extractServiceMessage('')).toBeUndefined();
  });
});

describe('requestStream', () => {
  it('returns the body as a stream', async () => {
    nock(BASE)
      .get('/api/v1/export')
      .reply(200, '  [{"a":1}]', { 'Content-Type': 'application/octet-stream' });
    const { client } = makeClient();
    const stream = await client.requestStream({ method: 'GET', path: '/export', retry: 'safe' });
    let text = '';
    for await (const chunk of stream) text += String(chunk);
    expect(text).toBe('  [{"a":1}]');
  });

  it('an HTML body is a 502, retried, and the error after retries is exit 5', async () => {
    nock(BASE).get('/api/v1/export').times(2).reply(200, '<html>502 Bad Gateway</html>');
    const { client } = makeClient({}, { retryPolicy: { retries: 1 } });
    const error = (await rejectionOf(
      client.requestStream({ method: 'GET', path: '/export', retry: 'safe' }),
    )) as UnavailableError;
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.http?.status).toBe(502);
  });

  it('an error status reads the service message', async () => {
    nock(BASE).get('/api/v1/export').reply(404, { error: 'no export' });
    const { client } = makeClient();
    const error = (await rejectionOf(
      client.requestStream({ method: 'GET', path: '/export', retry: 'safe' }),
    )) as ApiError;
    expect(error.http.serviceMessage).toBe('no export');
  });
});
