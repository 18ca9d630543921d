/** Conformance: listing, updating and deleting scan profiles (api-notes "Scan profiles": [code] list, [guess] PUT/DELETE). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_SCAN_TEMPLATES,
  generateConnections,
  type RunningEmulator,
  startEmulator,
} from '../../src/emulator/index.js';
import { clientFor, obj } from './raw-http.js';

describe('scan profile changes', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof clientFor>;
  const connections = generateConnections(3, { seed: 5 });
  const templateId = DEFAULT_SCAN_TEMPLATES[0]!._id;
  const nightly = {
    name: 'Nightly',
    dataSourceList: [connections[0]!._id!],
    scanTemplateId: templateId,
    schedule: { cronExpression: '0 2 * * *', timeZone: 'UTC' },
  };
  let id: string;
  beforeEach(async () => {
    emu = await startEmulator({ data: { connections } });
    api = clientFor(emu.url, emu.token);
    id = obj(await api.post('/api/v1/scanProfiles', nightly))._id;
  });
  afterEach(() => emu.close());

  it('lists profiles as {"scanProfiles":[...]} with no envelope', async () => {
    await api.post('/api/v1/scanProfiles', { ...nightly, name: 'Second' });
    const r = await api.get('/api/v1/scanProfiles');
    expect(r.status).toBe(200);
    expect(Object.keys(obj(r))).toEqual(['scanProfiles']);
    expect(obj(r).scanProfiles.map((p: { name: string }) => p.name)).toEqual(['Nightly', 'Second']);
    expect(obj(r).scanProfiles[0]).toMatchObject({ ...nightly, _id: id });
  });

  it('refuses a create with a name that exists: 400 "already exists"', async () => {
    const r = await api.post('/api/v1/scanProfiles', nightly);
    expect(r.status).toBe(400);
    expect(obj(r).error).toContain('already exists');
    expect(emu.record.createCount('Nightly', 'scanProfile')).toBe(1);
  });

  it('PUT replaces the profile, keeps _id and createdAt, and starts no scan', async () => {
    const before = emu.store.getProfile(id)!;
    const body = {
      ...nightly,
      dataSourceList: [connections[1]!.name],
      isSingleRunScan: true,
      schedule: undefined,
      _id: '000000000000000000000000',
      createdAt: 'then',
    };
    const r = await api.put(`/api/v1/scanProfiles/${id}`, body);
    expect(r.status).toBe(200);
    expect(obj(r)).toMatchObject({
      _id: id,
      dataSourceList: [connections[1]!.name],
      createdAt: before.createdAt,
    });
    expect(obj(r)).not.toHaveProperty('schedule');
    expect(emu.store.getProfile(id)).toMatchObject({ isSingleRunScan: true });
    expect(emu.store.profiles).toHaveLength(1);
    expect(emu.store.scansStarted).toHaveLength(0);
    expect(emu.record.changeCount('Nightly', 'update', 'scanProfile')).toBe(1);
  });

  it('PUT validates like a create; its own name is not a duplicate, another one is', async () => {
    expect((await api.put(`/api/v1/scanProfiles/${id}`, { ...nightly, scanTemplateId: 'x' })).status).toBe(
      400,
    );
    const second = obj(await api.post('/api/v1/scanProfiles', { ...nightly, name: 'Second' }))._id;
    const dup = await api.put(`/api/v1/scanProfiles/${second}`, nightly);
    expect(dup.status).toBe(400);
    expect(obj(dup).error).toContain('already exists');
    expect((await api.put(`/api/v1/scanProfiles/${id}`, nightly)).status).toBe(200);
  });

  it('PUT and DELETE of an unknown id: 404; of a malformed id: 400', async () => {
    const unknown = 'abcdefabcdefabcdefabcdef';
    expect((await api.put(`/api/v1/scanProfiles/${unknown}`, nightly)).status).toBe(404);
    expect((await api.del(`/api/v1/scanProfiles/${unknown}`)).status).toBe(404);
    expect((await api.del('/api/v1/scanProfiles/nope')).status).toBe(400);
  });

  it('DELETE removes the profile; GET then answers 404 and the name is free again', async () => {
    const r = await api.del(`/api/v1/scanProfiles/${id}`);
    expect(r.status).toBe(200);
    expect(obj(r)).toMatchObject({ _id: id, deleted: true });
    expect((await api.get(`/api/v1/scanProfiles/${id}`)).status).toBe(404);
    expect(obj(await api.get('/api/v1/scanProfiles')).scanProfiles).toEqual([]);
    expect((await api.post('/api/v1/scanProfiles', nightly)).status).toBe(200);
    expect(emu.record.changeCount('Nightly', 'delete')).toBe(1);
  });
});
