/** Conformance: scan profiles (spec 2.2, 4.2, 4.3). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_SCAN_TEMPLATES,
  generateConnections,
  type RunningEmulator,
  startEmulator,
} from '../../src/emulator/index.js';
import { clientFor, obj } from './raw-http.js';

describe('scan profiles', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof clientFor>;
  let ids: string[];
  const templateId = DEFAULT_SCAN_TEMPLATES[0]!._id;

  beforeAll(async () => {
    const connections = generateConnections(5, { seed: 3 });
    ids = connections.map((c) => c._id!);
    emu = await startEmulator({ data: { connections } });
    api = clientFor(emu.url, emu.token);
  });
  afterAll(() => emu.close());

  it('creates a scheduled profile, returns it with _id, and queues no scan', async () => {
    const body = {
      name: 'Nightly',
      description: 'every night',
      dataSourceList: ids.slice(0, 2),
      scanTemplateId: templateId,
      schedule: { cronExpression: '0 2 * * *', timeZone: 'UTC' },
    };
    const r = await api.post('/api/v1/scanProfiles', body);
    expect(r.status).toBe(200);
    expect(obj(r)._id).toMatch(/^[0-9a-f]{24}$/);
    expect(obj(r)).toMatchObject(body);
    expect(emu.store.scansStarted.filter((s) => s.profileId === obj(r)._id)).toHaveLength(0);
    const got = await api.get(`/api/v1/scanProfiles/${obj(r)._id}`);
    expect(got.status).toBe(200);
    expect(obj(got)).toMatchObject({ ...body, _id: obj(r)._id });
  });

  it('starts a scan at once for a one-time profile', async () => {
    const r = await api.post('/api/v1/scanProfiles', {
      name: 'Once',
      dataSourceList: [ids[0]],
      scanTemplateId: templateId,
      isSingleRunScan: true,
    });
    expect(r.status).toBe(200);
    const started = emu.store.scansStarted.filter((s) => s.profileId === obj(r)._id);
    expect(started).toHaveLength(1);
    expect(started[0]!.dataSourceList).toEqual([ids[0]]);
  });

  it('accepts data sources listed by name, as real bodies often do', async () => {
    const name = emu.store.connections[3]!.name;
    const r = await api.post('/api/v1/scanProfiles', {
      name: 'By name',
      dataSourceList: [name],
      scanTemplateId: templateId,
      schedule: { cronExpression: '0 3 * * 0', timeZone: 'Europe/Berlin' },
    });
    expect(r.status).toBe(200);
  });

  const base = () => ({
    name: 'Bad',
    dataSourceList: [ids[0]],
    scanTemplateId: templateId,
    isSingleRunScan: true,
  });
  it.each([
    ['no name', () => ({ ...base(), name: undefined })],
    ['no dataSourceList', () => ({ ...base(), dataSourceList: undefined })],
    ['a dataSourceList that is not strings', () => ({ ...base(), dataSourceList: [1] })],
    ['an unknown data source', () => ({ ...base(), dataSourceList: ['ffffffffffffffffffffffff'] })],
    ['an invalid scanTemplateId', () => ({ ...base(), scanTemplateId: 'nope' })],
    ['neither isSingleRunScan nor schedule', () => ({ ...base(), isSingleRunScan: undefined })],
    ['isSingleRunScan: false and no schedule', () => ({ ...base(), isSingleRunScan: false })],
    [
      'both isSingleRunScan and schedule',
      () => ({ ...base(), schedule: { cronExpression: '0 2 * * *', timeZone: 'UTC' } }),
    ],
    [
      'a schedule without a cron expression',
      () => ({ ...base(), isSingleRunScan: undefined, schedule: { timeZone: 'UTC' } }),
    ],
    [
      'an unknown time zone',
      () => ({
        ...base(),
        isSingleRunScan: undefined,
        schedule: { cronExpression: '0 2 * * *', timeZone: 'Mars/Base' },
      }),
    ],
  ])('refuses %s with 400 {error} and starts nothing', async (_label, make) => {
    const before = emu.store.scansStarted.length;
    const r = await api.post('/api/v1/scanProfiles', make());
    expect(r.status).toBe(400);
    expect(typeof obj(r).error).toBe('string');
    expect(emu.store.scansStarted.length).toBe(before);
  });

  it('refuses a second profile with the same name', async () => {
    const body = {
      ...base(),
      name: 'Twice',
      isSingleRunScan: undefined,
      schedule: { cronExpression: '0 2 * * *', timeZone: 'UTC' },
    };
    expect((await api.post('/api/v1/scanProfiles', body)).status).toBe(200);
    const again = await api.post('/api/v1/scanProfiles', body);
    expect(again.status).toBe(400);
    expect(obj(again).error).toMatch(/already exists/);
    expect(emu.record.createCount('Twice', 'scanProfile')).toBe(1);
  });

  it('answers 400 {error} for a malformed id and 404 {error} for an unknown one', async () => {
    const bad = await api.get('/api/v1/scanProfiles/123');
    expect(bad.status).toBe(400);
    expect(typeof obj(bad).error).toBe('string');
    const unknown = await api.get('/api/v1/scanProfiles/0123456789abcdef01234567');
    expect(unknown.status).toBe(404);
    expect(typeof obj(unknown).error).toBe('string');
  });
});
