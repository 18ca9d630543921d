/** The request record keeps a bounded window; its counters stay exact (tests read createCount). */
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { createRecord } from '../../src/emulator/record.js';
import { clientFor } from './raw-http.js';

describe('request record', () => {
  let emu: RunningEmulator;
  afterEach(() => emu.close());

  it('keeps at least the last maxRecordedRequests requests, and exact counts of everything', async () => {
    emu = await startEmulator({ maxRecordedRequests: 10 });
    const api = clientFor(emu.url, emu.token);
    for (let i = 0; i < 30; i++) {
      const r = await api.post('/api/v1/ds_connections', { ds_connection: { name: `c${i}`, type: 'kafka' } });
      expect(r.status).toBe(200);
    }
    expect(emu.record.requestCount).toBe(30);
    expect(emu.record.requests.length).toBeGreaterThanOrEqual(10);
    expect(emu.record.requests.length).toBeLessThan(30);
    expect(emu.record.requests.at(-1)!.seq).toBe(30);
    expect(emu.record.creates.length).toBeLessThan(30);
    // c0 fell out of the lists, not out of the counts.
    expect(emu.record.creates.some((c) => c.name === 'c0')).toBe(false);
    expect(emu.record.createCount('c0')).toBe(1);
    expect(emu.record.createCount('c0', 'scanProfile')).toBe(0);
    emu.record.reset();
    expect(emu.record.requestCount).toBe(0);
    expect(emu.record.createCount('c0')).toBe(0);
  });
});

describe('createRecord', () => {
  it('drops in blocks: between max and max + max/10 entries after any number of requests', () => {
    const record = createRecord(100);
    for (let i = 0; i < 1000; i++) {
      record.addRequest('GET', '/x', '');
      expect(record.requests.length).toBeLessThanOrEqual(110);
      if (i >= 100) expect(record.requests.length).toBeGreaterThanOrEqual(100);
    }
    expect(record.requestCount).toBe(1000);
  });
});
