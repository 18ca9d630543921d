/**
 * Conformance: changing connections (api-notes "Updating, deleting, testing"): PUT and DELETE of
 * `ds_connections/{name}` and `POST ds-connection-test`.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import type { EmulatorOptions, SeedConnection } from '../../src/emulator/types.js';
import { clientFor, obj } from './raw-http.js';

const pg: SeedConnection = {
  name: 'orders-pg',
  type: 'rdb-postgresql',
  rdb_url: 'pg.internal:5432',
  rdb_name: 'orders',
  username: 'dds',
  password: 'Stored-Secret-1!',
  scanner_group: 'eu-scanners',
  enabled: 'yes',
  custom_fields: [{ field_name: 'pin', field_value: '1234', field_type: 'encrypted' }],
};
const other: SeedConnection = { name: 'other-kafka', type: 'kafka', host: 'k.internal', password: 'K-1' };

describe('connection changes', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof clientFor>;
  const start = async (options: EmulatorOptions = {}) => {
    emu = await startEmulator({ data: { connections: [pg, other] }, ...options });
    api = clientFor(emu.url, emu.token);
  };
  beforeEach(() => start());
  afterEach(() => emu.close());

  const url = (name: string) => `/api/v1/ds_connections/${encodeURIComponent(name)}`;
  /** The connection as a client reads it (masked), as the body of a PUT. */
  const readBack = async (name: string) => obj(await api.get(url(name))).data.ds_connection;

  describe('PUT ds_connections/{name}', () => {
    it('replaces the configuration, keeps server-managed fields, and answers the masked object', async () => {
      const before = emu.store.getConnection('orders-pg')!;
      const { password: _secret, ...body }: Record<string, unknown> = {
        ...pg,
        rdb_name: 'orders_v2',
        owners: ['a@example.com'],
      };
      const r = await api.put(url('orders-pg'), {
        ds_connection: { ...body, _id: 'ffffffffffffffffffffffff', created_at: 'then', enabled: undefined },
      });
      expect(r.status).toBe(200);
      expect(obj(r).data.ds_connection).toMatchObject({
        name: 'orders-pg',
        rdb_name: 'orders_v2',
        password: '******',
      });
      expect(obj(r).ds_connection).toEqual(obj(r).data.ds_connection);
      const after = emu.store.getConnection('orders-pg')!;
      expect(after.rdb_name).toBe('orders_v2');
      expect(after.owners).toEqual(['a@example.com']);
      // Replaced, not merged: a configuration key left out is gone.
      expect(after).not.toHaveProperty('enabled');
      // Server-managed: the body's values are ignored.
      expect(after._id).toBe(before._id);
      expect(after.created_at).toBe(before.created_at);
      expect(after.connectionStatusTest).toEqual(before.connectionStatusTest);
      // A secret left out of the body keeps its stored value.
      expect(after.password).toBe('Stored-Secret-1!');
      expect(emu.record.changeCount('orders-pg', 'update')).toBe(1);
      expect(emu.record.requests.at(-1)).toMatchObject({ method: 'PUT', status: 200, applied: true });
    });

    it('stores a new secret given in the clear', async () => {
      const r = await api.put(url('orders-pg'), { ds_connection: { ...pg, password: 'New-Secret-2!' } });
      expect(r.status).toBe(200);
      expect(emu.store.getConnection('orders-pg')!.password).toBe('New-Secret-2!');
    });

    it('refuses the masked value "******" for a secret with 400, and stores nothing', async () => {
      const masked = await readBack('orders-pg');
      expect(masked.password).toBe('******');
      const r = await api.put(url('orders-pg'), { ds_connection: { ...masked, rdb_name: 'changed' } });
      expect(r.status).toBe(400);
      expect(obj(r).error).toMatch(/password.*\*{6}/);
      expect(emu.store.getConnection('orders-pg')!.password).toBe('Stored-Secret-1!');
      expect(emu.store.getConnection('orders-pg')!.rdb_name).toBe('orders');
      expect(emu.record.changeCount('orders-pg')).toBe(0);
      expect(emu.record.requests.at(-1)).toMatchObject({ status: 400, applied: false });
    });

    it('refuses a masked encrypted custom field too', async () => {
      const r = await api.put(url('orders-pg'), {
        ds_connection: {
          ...pg,
          custom_fields: [{ field_name: 'pin', field_value: '******', field_type: 'encrypted' }],
        },
      });
      expect(r.status).toBe(400);
      expect(obj(r).error).toContain('custom_fields/0/field_value');
    });

    it('answers 400 "Unable to locate" for an unknown name, as GET does', async () => {
      const r = await api.put(url('nope'), { ds_connection: { ...pg, name: 'nope' } });
      expect(r.status).toBe(400);
      expect(obj(r).error).toContain('Unable to locate');
      expect(emu.store.getConnection('nope')).toBeUndefined();
    });

    it('validates like a create: a mandatory field emptied, a bad body', async () => {
      const r = await api.put(url('orders-pg'), { ds_connection: { ...pg, rdb_url: '' } });
      expect(r.status).toBe(400);
      expect(obj(r).error).toMatch(/mandatory.*rdb_url/);
      const bad = await api.put(url('orders-pg'), { name: 'orders-pg' });
      expect(bad.status).toBe(400);
      expect(obj(bad).error).toContain('ds_connection');
    });

    it('refuses a rename through the body; a body without name or type keeps the stored ones', async () => {
      const r = await api.put(url('orders-pg'), { ds_connection: { ...pg, name: 'renamed-pg' } });
      expect(r.status).toBe(400);
      expect(obj(r).error).toMatch(/renam/);
      expect(emu.store.getConnection('renamed-pg')).toBeUndefined();
      const { name: _n, type: _t, ...rest } = pg;
      const ok = await api.put(url('orders-pg'), { ds_connection: { ...rest, rdb_name: 'x' } });
      expect(ok.status).toBe(200);
      expect(emu.store.getConnection('orders-pg')).toMatchObject({
        name: 'orders-pg',
        type: 'rdb-postgresql',
      });
    });

    it('keeps the connection in its place in the list and reachable by _id in a profile', async () => {
      await api.put(url('orders-pg'), { ds_connection: { ...pg, rdb_name: 'y' } });
      expect(emu.store.connections.map((c) => c.name)).toEqual(['orders-pg', 'other-kafka']);
      const id = emu.store.getConnection('orders-pg')!._id;
      const p = await api.post('/api/v1/scanProfiles', {
        name: 'P',
        dataSourceList: [id],
        scanTemplateId: '64b7f0c2a1d3e4f5a6b7c801',
        isSingleRunScan: true,
      });
      expect(p.status).toBe(200);
    });
  });

  describe('DELETE ds_connections/{name}', () => {
    it('removes the connection; a second delete answers 400 "Unable to locate"', async () => {
      const r = await api.del(url('orders-pg'));
      expect(r.status).toBe(200);
      expect(obj(r).data).toMatchObject({ name: 'orders-pg' });
      expect(emu.store.getConnection('orders-pg')).toBeUndefined();
      expect((await api.get(url('orders-pg'))).status).toBe(400);
      const list = obj(await api.get('/api/v1/ds-connections'));
      expect(list.data.totalCount).toBe(1);
      const again = await api.del(url('orders-pg'));
      expect(again.status).toBe(400);
      expect(obj(again).error).toContain('Unable to locate');
      expect(emu.record.changeCount('orders-pg', 'delete')).toBe(1);
    });

    it('frees the name for a new create', async () => {
      await api.del(url('orders-pg'));
      const r = await api.post('/api/v1/ds_connections', { ds_connection: pg });
      expect(r.status).toBe(200);
      expect(emu.record.createCount('orders-pg')).toBe(1);
    });
  });

  describe('POST ds-connection-test', () => {
    const test = (name: string, isNewPassword = false, extra: Record<string, unknown> = {}) =>
      api.post('/api/v1/ds-connection-test', { ds_connection: { ...pg, name, ...extra }, isNewPassword });

    it('succeeds by default, answers {operationStatus, message}, and stores connectionStatusTest', async () => {
      const r = await test('orders-pg');
      expect(r.status).toBe(200);
      expect(obj(r)).toEqual({ operationStatus: 'SUCCESS', message: expect.any(String) });
      const stored = emu.store.getConnection('orders-pg')!.connectionStatusTest as Record<string, unknown>;
      expect(stored.is_success).toBe(true);
      expect(Date.parse(String(stored.last_connection))).not.toBeNaN();
      expect(emu.record.changeCount('orders-pg', 'test')).toBe(1);
      // The stored secret is untouched by a test with isNewPassword: false.
      expect(emu.store.getConnection('orders-pg')!.password).toBe('Stored-Secret-1!');
    });

    it('accepts the masked read-back with isNewPassword: false (the stored secret is used)', async () => {
      const masked = await readBack('orders-pg');
      const r = await api.post('/api/v1/ds-connection-test', { ds_connection: masked, isNewPassword: false });
      expect(r.status).toBe(200);
      expect(obj(r).operationStatus).toBe('SUCCESS');
    });

    it('refuses "******" with isNewPassword: true', async () => {
      const r = await test('orders-pg', true, { password: '******' });
      expect(r.status).toBe(400);
      expect(emu.record.changeCount('orders-pg')).toBe(0);
    });

    it('fails for the names set to fail, and stores is_success: false', async () => {
      emu.setTestFailures(['orders-pg']);
      const r = await test('orders-pg');
      expect(r.status).toBe(200);
      expect(obj(r)).toMatchObject({ operationStatus: 'FAILED' });
      expect(emu.store.getConnection('orders-pg')!.connectionStatusTest).toMatchObject({ is_success: false });
      expect(obj(await test('other-kafka')).operationStatus).toBe('SUCCESS');
    });

    it('reads failures from the seed (connectionTestFailures) and the testFailures option', async () => {
      await emu.close();
      await start({ testFailures: ['other-kafka'] });
      expect(obj(await test('other-kafka')).operationStatus).toBe('FAILED');
      await emu.close();
      emu = await startEmulator({ data: { connections: [pg], connectionTestFailures: ['orders-pg'] } });
      api = clientFor(emu.url, emu.token);
      expect(obj(await test('orders-pg')).operationStatus).toBe('FAILED');
    });

    it('answers {success, message} with testAnswerShape: success', async () => {
      await emu.close();
      await start({ testAnswerShape: 'success', testFailures: ['other-kafka'] });
      expect(obj(await test('orders-pg'))).toEqual({ success: true, message: expect.any(String) });
      expect(obj(await test('other-kafka'))).toEqual({ success: false, message: expect.any(String) });
    });

    it('answers 400 "Unable to locate" for an unknown name', async () => {
      const r = await test('nope');
      expect(r.status).toBe(400);
      expect(obj(r).error).toContain('Unable to locate');
    });
  });
});
