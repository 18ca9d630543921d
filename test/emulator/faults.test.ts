/** Conformance: faults on purpose: every kind, by route and probability, deterministic by seed. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseFaults, type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { clientFor, obj, send } from './raw-http.js';

const conn = (name: string) => ({
  ds_connection: {
    name,
    type: 'rdb-postgresql',
    rdb_url: 'pg:5432',
    rdb_name: 'x',
    username: 'u',
    password: 'p',
  },
});

describe('fault spec syntax', () => {
  it('parses kind, value, probability, method and path', () => {
    expect(
      parseFaults(
        'commit-then-drop:0.05@POST:/ds_connections,500:2%,reset:0.01@GET:*,latency=250@/ds-connections',
      ),
    ).toEqual([
      { kind: 'commit-then-drop', probability: 0.05, method: 'POST', path: '/ds_connections' },
      { kind: '500', probability: 0.02, method: '*', path: '*' },
      { kind: 'reset', probability: 0.01, method: 'GET', path: '*' },
      { kind: 'latency', probability: 1, method: '*', path: '/ds-connections', value: 250 },
    ]);
  });

  it('keeps a colon inside the path and strips an /api/v1 prefix', () => {
    expect(parseFaults('html-502@PATCH:/api/v1/actionable-insights/cases:update')).toEqual([
      { kind: 'html-502', probability: 1, method: 'PATCH', path: '/actionable-insights/cases:update' },
    ]);
    expect(parseFaults('429=3@/actionable-insights/cases:update')[0]).toMatchObject({
      method: '*',
      value: 3,
    });
  });

  it.each(['explode', '500:2', '500:abc', 'latency=-1'])('refuses %s with a pointed message', (spec) => {
    expect(() => parseFaults(spec)).toThrow(/fault/i);
  });
});

describe('faults', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof clientFor>;
  beforeEach(async () => {
    emu = await startEmulator({ seed: 42 });
    api = clientFor(emu.url, emu.token);
  });
  afterEach(() => emu.close());

  it('commit-then-drop at 100% on POST: the create is stored although the client saw no answer', async () => {
    emu.setFaults('commit-then-drop@POST:/ds_connections');
    await expect(api.post('/api/v1/ds_connections', conn('dropped-one'))).rejects.toThrow(
      /socket hang up|ECONNRESET/,
    );
    expect(emu.store.getConnection('dropped-one')).toBeDefined();
    expect(emu.record.createCount('dropped-one')).toBe(1);
    const rec = emu.record.requests.find((r) => r.method === 'POST');
    expect(rec).toMatchObject({
      path: '/api/v1/ds_connections',
      status: null,
      fault: 'commit-then-drop',
      applied: true,
    });
    // A careful client asks by name before sending again, and the record proves exactly-once.
    emu.setFaults([]);
    expect((await api.get('/api/v1/ds_connections/dropped-one')).status).toBe(200);
    const again = await api.post('/api/v1/ds_connections', conn('dropped-one'));
    expect(again.status).toBe(400);
    expect(emu.record.createCount('dropped-one')).toBe(1);
  });

  it('commit-then-500: applied, then answered with the spec 500 body', async () => {
    emu.setFaults('commit-then-500@POST:/ds_connections');
    const r = await api.post('/api/v1/ds_connections', conn('applied-500'));
    expect(r.status).toBe(500);
    expect(obj(r)).toMatchObject({ status: 'error', message: expect.any(String), errors: expect.any(Array) });
    expect(emu.record.createCount('applied-500')).toBe(1);
    expect(emu.record.requests.at(-1)).toMatchObject({
      status: 500,
      fault: 'commit-then-500',
      applied: true,
    });
  });

  it('500: answered before applying', async () => {
    emu.setFaults('500@POST:*');
    const r = await api.post('/api/v1/ds_connections', conn('never-500'));
    expect(r.status).toBe(500);
    expect(obj(r).errors).toEqual(expect.any(Array));
    expect(emu.store.getConnection('never-500')).toBeUndefined();
    expect(emu.record.requests.at(-1)).toMatchObject({ status: 500, fault: '500', applied: false });
  });

  it('html-502: a 200 carrying an HTML Bad Gateway page, not applied', async () => {
    emu.setFaults('html-502');
    const r = await api.post('/api/v1/ds_connections', conn('never-502'));
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/text\/html/);
    expect(r.text).toContain('502 Bad Gateway');
    expect(r.json).toBeUndefined();
    expect(emu.store.getConnection('never-502')).toBeUndefined();
  });

  it('reset: the connection is reset before applying', async () => {
    emu.setFaults('reset@POST:/ds_connections');
    await expect(api.post('/api/v1/ds_connections', conn('never-reset'))).rejects.toThrow(
      /ECONNRESET|socket hang up/,
    );
    expect(emu.store.getConnection('never-reset')).toBeUndefined();
    expect(emu.record.requests.at(-1)).toMatchObject({ status: null, fault: 'reset', applied: false });
  });

  it('429 fault: answered with Retry-After, not applied', async () => {
    emu.setFaults('429=7@POST:*');
    const r = await api.post('/api/v1/ds_connections', conn('never-429'));
    expect(r.status).toBe(429);
    expect(r.headers['retry-after']).toBe('7');
    expect(emu.store.getConnection('never-429')).toBeUndefined();
  });

  it('html-content-type: JSON labelled text/html', async () => {
    emu.setFaults('html-content-type@GET:/ds-connections');
    const r = await api.get('/api/v1/ds-connections');
    expect(r.headers['content-type']).toMatch(/text\/html/);
    expect(obj(r).status).toBe('success');
  });

  it('latency: the option and a latency rule both delay the answer', async () => {
    emu.setLatency(120);
    let t0 = performance.now();
    expect((await api.get('/api/v1/ds-connections')).status).toBe(200);
    // Lower bounds only: jitter is 10%, and a slow machine only makes it later.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(100);
    emu.setLatency(0);
    emu.setFaults('latency=150@GET:/ds-connections');
    t0 = performance.now();
    await api.get('/api/v1/ds-connections');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(145);
    expect(emu.record.requests.at(-1)?.fault).toBe('latency');
  });

  it('latency: a write is applied when it arrives; its answer leaves the latency after the request arrived', async () => {
    emu.setLatency(1500);
    const t0 = performance.now();
    let answered = false;
    const posted = api.post('/api/v1/ds_connections', conn('early')).then((r) => {
      answered = true;
      return r;
    });
    // The service holds it well before it answers (a client that gives up meanwhile has still written).
    for (let i = 0; i < 400 && emu.store.getConnection('early') === undefined; i++)
      await new Promise((r) => setTimeout(r, 5));
    expect(emu.store.getConnection('early')).toBeDefined();
    expect(answered).toBe(false);
    expect((await posted).status).toBe(200);
    // Lower bound only (jitter is 10 %): the answer waits out the latency, the work inside it.
    expect(performance.now() - t0).toBeGreaterThanOrEqual(1300);
  });

  it('targets faults by method and route only', async () => {
    emu.setFaults('500@POST:/ds_connections');
    expect((await api.get('/api/v1/ds-connections')).status).toBe(200);
    expect((await api.get('/api/v1/actionable-insights/all-cases')).status).toBe(200);
    expect((await api.post('/api/v1/ds_connections', conn('x'))).status).toBe(500);
  });

  it('applies a probability and is deterministic for a seed', async () => {
    const run = async (seed: number) => {
      const e = await startEmulator({ seed, faults: '500:0.3@GET:*' });
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 60; i++)
          statuses.push((await send(e.url, 'GET', '/api/v1/ds-connections', { token: e.token })).status);
        return statuses;
      } finally {
        await e.close();
      }
    };
    const a = await run(7);
    const b = await run(7);
    expect(a).toEqual(b);
    const failures = a.filter((s) => s === 500).length;
    expect(failures).toBeGreaterThan(5);
    expect(failures).toBeLessThan(35);
  });

  it('records every request with its method, path, status and fault', async () => {
    emu.record.reset();
    await api.get('/api/v1/ds-connections?limit=1');
    await send(emu.url, 'GET', '/api/v1/ds-connections', { auth: null });
    expect(emu.record.requests.map((r) => [r.seq > 0, r.method, r.path, r.query, r.status, r.fault])).toEqual(
      [
        [true, 'GET', '/api/v1/ds-connections', 'limit=1', 200, null],
        [true, 'GET', '/api/v1/ds-connections', '', 401, null],
      ],
    );
  });
});

describe('rate limit', () => {
  it('answers 429 with Retry-After once the bucket is empty', async () => {
    const emu = await startEmulator({ rateLimit: 0.5 });
    try {
      expect((await send(emu.url, 'GET', '/api/v1/ds-connections', { token: emu.token })).status).toBe(200);
      const r = await send(emu.url, 'GET', '/api/v1/ds-connections', { token: emu.token });
      expect(r.status).toBe(429);
      // Integer seconds, at least 1: the time to the next token at 0.5/s.
      expect(r.headers['retry-after']).toBe('2');
      expect(typeof obj(r).error).toBe('string');
    } finally {
      await emu.close();
    }
  });

  it('holds the rate within tolerance over a short window', async () => {
    const rate = 40;
    const emu = await startEmulator();
    try {
      emu.setRateLimit(rate);
      const t0 = performance.now();
      let accepted = 0;
      let limited = 0;
      // Four clients hammering for ~1.2 s: far more requests than the rate allows.
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (performance.now() - t0 < 1200) {
            const r = await send(emu.url, 'GET', '/api/v1/ds-connections?limit=1', { token: emu.token });
            if (r.status === 200) accepted++;
            else if (r.status === 429) {
              limited++;
              expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
            }
          }
        }),
      );
      const elapsed = (performance.now() - t0) / 1000;
      const allowed = rate /* burst */ + rate * elapsed;
      expect(limited).toBeGreaterThan(0);
      // The rate is the behaviour, so time is measured, but only in bounds a slow machine cannot break:
      // a stall makes `elapsed` longer (raising the ceiling) and loses refills (lowering `accepted`).
      expect(accepted).toBeLessThanOrEqual(Math.ceil(allowed * 1.1));
      // The bucket refilled: more than the burst got through. (A tighter floor, such as 90% of the rate,
      // would fail whenever the process is starved of CPU for a good part of the window.)
      expect(accepted).toBeGreaterThan(rate);
    } finally {
      await emu.close();
    }
  });
});
