/** Conformance: data source connections (spec 4.1, 4.7, 4.8; api-notes on listing and objects). */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateConnections, type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import type { SeedConnection } from '../../src/emulator/types.js';
import { clientFor, obj } from './raw-http.js';

const mysql = {
  name: 'new-mysql',
  type: 'rdb-mysql',
  rdb_url: 'mysql.internal:3306',
  rdb_name: 'app',
  username: 'dds',
  password: 'S3cret-Value!',
};

describe('connections', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof clientFor>;

  // A fresh emulator per test: several tests create connections, and the counts others check (1201)
  // must not depend on which ran before.
  let connections: SeedConnection[];
  beforeAll(() => {
    connections = generateConnections(1200, { seed: 7 });
    connections.push({
      name: 'role-s3',
      type: 's3',
      enabled: 'yes',
      security_tier: '1',
      is_ocr_enabled: 'false',
      bucket_name: 'acme-role-bucket',
      aws_region: 'eu-west-1',
      isIamRoleAuth: true,
      aws_access_key: '',
      aws_secret_key: '',
      custom_fields: [
        { field_name: 'pin', field_value: '1234', field_type: 'encrypted' },
        { field_name: 'cc', field_value: 'CC-1', field_type: 'clear' },
      ],
    });
  });
  beforeEach(async () => {
    emu = await startEmulator({ data: { connections: structuredClone(connections) } });
    api = clientFor(emu.url, emu.token);
  });
  afterEach(() => emu.close());

  it('lists with the real envelope and a default page of 100, totalCount always present', async () => {
    const r = await api.get('/api/v1/ds-connections');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/application\/json/);
    const body = obj(r);
    expect(body.status).toBe('success');
    expect(body.statusCode).toBe(200);
    expect(body.message).toBeNull();
    expect(body.data.ds_connections).toHaveLength(100);
    expect(body.data.totalCount).toBe(1201);
  });

  it('clamps a large limit to 1000 instead of refusing it', async () => {
    const r = await api.get('/api/v1/ds-connections?limit=5000&requireTotalCount=true');
    expect(r.status).toBe(200);
    expect(obj(r).data.ds_connections).toHaveLength(1000);
    expect(obj(r).data.totalCount).toBe(1201);
  });

  it('pages with skip until a short page, seeing every connection once', async () => {
    const seen = new Set<string>();
    for (let skip = 0; ; skip += 500) {
      const r = await api.get(`/api/v1/ds-connections?skip=${skip}&limit=500`);
      const page = obj(r).data.ds_connections as Array<{ name: string }>;
      for (const c of page) seen.add(c.name);
      if (page.length < 500) break;
    }
    expect(seen.size).toBe(1201);
  });

  it('refuses a negative or non-numeric skip/limit with 400 {error}', async () => {
    for (const q of ['skip=-1', 'limit=abc']) {
      const r = await api.get(`/api/v1/ds-connections?${q}`);
      expect(r.status).toBe(400);
      expect(typeof obj(r).error).toBe('string');
    }
  });

  it.each([
    ['name', false],
    ['name:asc', false],
    ['name:desc', true],
    ['name DESC', true],
    ['name ASC', false],
  ])('sorts by %s', async (sort, descending) => {
    const r = await api.get(`/api/v1/ds-connections?limit=50&sort=${encodeURIComponent(sort)}`);
    expect(r.status).toBe(200);
    const names = (obj(r).data.ds_connections as Array<{ name: string }>).map((c) => c.name);
    const all = emu.store.connections.map((c) => c.name).sort();
    const expected = (descending ? all.reverse() : all).slice(0, 50);
    expect(names).toEqual(expected);
  });

  const filterCases: Array<[string, unknown, (c: Record<string, unknown>) => boolean]> = [
    [
      'in',
      [{ field: 'type', value: ['s3', 'snowflake'], operator: 'in' }],
      (c) => c.type === 's3' || c.type === 'snowflake',
    ],
    ['equal', [{ field: 'type', value: 'smb', operator: 'equal' }], (c) => c.type === 'smb'],
    ['notEqual', [{ field: 'type', value: 'smb', operator: 'notEqual' }], (c) => c.type !== 'smb'],
    [
      'contains',
      [{ field: 'name', value: 'mongodb-hr', operator: 'contains' }],
      (c) => String(c.name).includes('mongodb-hr'),
    ],
    [
      'several conditions (AND)',
      [
        { field: 'type', value: ['s3'], operator: 'in' },
        { field: 'name', value: 'finance', operator: 'contains' },
      ],
      (c) => c.type === 's3' && String(c.name).includes('finance'),
    ],
  ];
  it.each(filterCases)('filters with the JSON-array form: %s', async (_label, filter, predicate) => {
    const r = await api.get(
      `/api/v1/ds-connections?limit=1000&filter=${encodeURIComponent(JSON.stringify(filter))}`,
    );
    expect(r.status).toBe(200);
    const expected = emu.store.connections.filter(predicate).length;
    expect(expected).toBeGreaterThan(0);
    expect(obj(r).data.totalCount).toBe(expected);
    expect(obj(r).data.ds_connections.length).toBe(Math.min(expected, 1000));
  });

  it('compares mixed-typed values as text ("false" matches false)', async () => {
    const filter = [{ field: 'is_ocr_enabled', value: ['false'], operator: 'in' }];
    const r = await api.get(
      `/api/v1/ds-connections?limit=1000&filter=${encodeURIComponent(JSON.stringify(filter))}`,
    );
    const expected = emu.store.connections.filter((c) => String(c.is_ocr_enabled) === 'false').length;
    expect(obj(r).data.totalCount).toBe(expected);
  });

  it('answers 400 {error} to a filter that is not JSON or has an unknown operator', async () => {
    for (const f of ['not-json', JSON.stringify([{ field: 'type', value: 's3', operator: 'like' }])]) {
      const r = await api.get(`/api/v1/ds-connections?filter=${encodeURIComponent(f)}`);
      expect(r.status).toBe(400);
      expect(typeof obj(r).error).toBe('string');
    }
  });

  it('masks secrets in lists; empty secrets stay empty; values keep their JSON types', async () => {
    const filter = encodeURIComponent(
      JSON.stringify([{ field: 'name', value: 'role-s3', operator: 'equal' }]),
    );
    const role = obj(await api.get(`/api/v1/ds-connections?filter=${filter}`)).data.ds_connections[0];
    expect(role.aws_access_key).toBe('');
    expect(role.aws_secret_key).toBe('');
    expect(role.enabled).toBe('yes');
    expect(role.security_tier).toBe('1');
    expect(role.is_ocr_enabled).toBe('false');
    expect(role.custom_fields).toEqual([
      { field_name: 'pin', field_value: '******', field_type: 'encrypted' },
      { field_name: 'cc', field_value: 'CC-1', field_type: 'clear' },
    ]);
    const page = obj(await api.get('/api/v1/ds-connections?limit=1000')).data.ds_connections as Array<
      Record<string, unknown>
    >;
    const withPassword = page.filter((c) => typeof c.password === 'string' && c.password !== '');
    expect(withPassword.length).toBeGreaterThan(0);
    for (const c of withPassword) expect(c.password).toBe('******');
    const s3keys = page.filter((c) => c.type === 's3' && c.aws_secret_key !== '');
    expect(s3keys.length).toBeGreaterThan(0);
    for (const c of s3keys) expect([c.aws_access_key, c.aws_secret_key]).toEqual(['******', '******']);
    // The store keeps the real values.
    expect(
      emu.store.connections.find((c) => c.password !== undefined && c.password !== '')?.password,
    ).not.toBe('******');
  });

  it('exports every connection as a JSON array attachment, secrets masked', async () => {
    const r = await api.get('/api/v1/ds-connections/file-download/export');
    expect(r.status).toBe(200);
    expect(r.headers['content-disposition']).toMatch(/^attachment; filename=/);
    const list = r.json as Array<Record<string, unknown>>;
    expect(list).toHaveLength(1201);
    expect(list.every((c) => c.password === undefined || c.password === '' || c.password === '******')).toBe(
      true,
    );
    expect(list.find((c) => c.name === 'role-s3')?.aws_secret_key).toBe('');
  });

  it('restricts the export to ?ids= (by _id, or by name); unknown ids are just absent', async () => {
    const [a, b] = emu.store.connections;
    const r = await api.get(
      `/api/v1/ds-connections/file-download/export?ids=${a!._id},${b!.name},000000000000000000000000`,
    );
    expect(r.status).toBe(200);
    expect((r.json as Array<{ name: string }>).map((c) => c.name)).toEqual([a!.name, b!.name]);
    const none = await api.get('/api/v1/ds-connections/file-download/export?ids=000000000000000000000000');
    expect(none.json).toEqual([]);
  });

  it('creates a connection: 200 with name and 24-hex _id, in the envelope and at the top', async () => {
    const r = await api.post('/api/v1/ds_connections', { ds_connection: mysql });
    expect(r.status).toBe(200);
    const body = obj(r);
    expect(body.name).toBe('new-mysql');
    expect(body._id).toMatch(/^[0-9a-f]{24}$/);
    expect(body.data).toEqual({ _id: body._id, name: 'new-mysql' });
    expect(body.status).toBe('success');
    expect(emu.store.getConnection('new-mysql')?.password).toBe('S3cret-Value!');
    expect(emu.record.createCount('new-mysql')).toBe(1);
  });

  it('ignores server-managed fields in a create and stores its own', async () => {
    const r = await api.post('/api/v1/ds_connections', {
      ds_connection: {
        ...mysql,
        name: 'managed-fields',
        _id: 'ffffffffffffffffffffffff',
        created_at: '1999-01-01T00:00:00.000Z',
        connectionStatusTest: { is_success: true },
        connectionStatusDeleteFindings: { is_success: true },
        test_timestamp: '1999-01-01T00:00:00.000Z',
        scan_num_of_objects: 7,
        // Not server-managed (api-notes: exact names, no prefix rule): a googledrive-style setting.
        scan_scope: 'myDrive',
      },
    });
    expect(r.status).toBe(200);
    const stored = emu.store.getConnection('managed-fields')!;
    expect(stored._id).toBe(obj(r)._id);
    expect(stored._id).not.toBe('ffffffffffffffffffffffff');
    expect(stored.created_at).not.toBe('1999-01-01T00:00:00.000Z');
    expect(stored.test_timestamp).toBeUndefined();
    expect(stored.scan_num_of_objects).toBeUndefined();
    expect(stored.connectionStatusDeleteFindings).toBeUndefined();
    expect(stored.scan_scope).toBe('myDrive');
    expect(stored.updated_at).toEqual(expect.any(String));
  });

  it('stamps created_at and updated_at on a create as recorded deployments do (ISO 8601, UTC, ms); a GET by name gives them', async () => {
    const before = new Date().toISOString();
    expect(
      (await api.post('/api/v1/ds_connections', { ds_connection: { ...mysql, name: 'stamped' } })).status,
    ).toBe(200);
    const found = obj(await api.get('/api/v1/ds_connections/stamped')).data.ds_connection;
    expect(found.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(found.created_at >= before).toBe(true);
    expect(found.updated_at).toBe(found.created_at);
  });

  it.each([
    ['a missing name', { ...mysql, name: undefined }],
    ['an invalid name', { ...mysql, name: 'bad/name!' }],
    ['a missing mandatory field', { ...mysql, name: 'no-url', rdb_url: undefined }],
    ['an empty mandatory field', { ...mysql, name: 'empty-url', rdb_url: '' }],
    ['a masked secret sent back', { ...mysql, name: 'masked-password', password: '******' }],
  ])('refuses %s with 400 {error}', async (_label, ds) => {
    const r = await api.post('/api/v1/ds_connections', { ds_connection: ds });
    expect(r.status).toBe(400);
    expect(typeof obj(r).error).toBe('string');
  });

  it('refuses a duplicate name with 400 "... already exists"', async () => {
    await api.post('/api/v1/ds_connections', { ds_connection: { ...mysql, name: 'dup-one' } });
    const r = await api.post('/api/v1/ds_connections', { ds_connection: { ...mysql, name: 'dup-one' } });
    expect(r.status).toBe(400);
    expect(obj(r).error).toMatch(/already exists/);
    expect(emu.record.createCount('dup-one')).toBe(1);
  });

  it('refuses a body without ds_connection, and a body that is not JSON', async () => {
    expect((await api.post('/api/v1/ds_connections', mysql)).status).toBe(400);
    const r = await api.post('/api/v1/ds_connections', '{"ds_connection":');
    expect(r.status).toBe(400);
    expect(typeof obj(r).error).toBe('string');
  });

  it('accepts a role-based s3 with empty keys, and an unknown type with only name and type', async () => {
    const s3 = await api.post('/api/v1/ds_connections', {
      ds_connection: {
        name: 'new-role-s3',
        type: 's3',
        bucket_name: 'acme-new',
        aws_region: 'us-east-1',
        isIamRoleAuth: true,
        aws_access_key: '',
        aws_secret_key: '',
      },
    });
    expect(s3.status).toBe(200);
    const odd = await api.post('/api/v1/ds_connections', {
      ds_connection: { name: 'odd (kafka): x', type: 'kafka' },
    });
    expect(odd.status).toBe(200);
  });

  it('gets one connection by name (masked), and answers 400 "Unable to locate" for an unknown one', async () => {
    const ok = await api.get(`/api/v1/ds_connections/${encodeURIComponent('role-s3')}`);
    expect(ok.status).toBe(200);
    expect(obj(ok).data.ds_connection.name).toBe('role-s3');
    expect(obj(ok).ds_connection.custom_fields[0].field_value).toBe('******');
    const missing = await api.get('/api/v1/ds_connections/no-such-source');
    expect(missing.status).toBe(400);
    expect(obj(missing).error).toContain('Unable to locate');
  });
});

describe('connector templates', () => {
  let emu: RunningEmulator;
  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(() => emu.close());

  it.each([
    's3',
    'snowflake',
    'rdb-mysql',
    'rdb-postgresql',
    'rdb-mssql',
    'rdb-oracle',
    'mongodb',
    'smb',
    'salesforce',
    'gcp-big-query',
  ])('serves the %s template in the real shape', async (type) => {
    const r = await clientFor(emu.url, emu.token).get(`/api/v1/ds-connections-types/template/${type}`);
    expect(r.status).toBe(200);
    const t = obj(r);
    expect(t.name).toBe(type);
    const fields = t.fields as Array<Record<string, unknown>>;
    for (const f of fields) {
      expect(typeof f.apiName).toBe('string');
      expect(typeof f.name).toBe('string');
      expect(typeof f.type).toBe('string');
      expect(typeof f.mandatory).toBe('boolean');
    }
    const keys = fields.map((f) => f.apiName);
    for (const common of [
      'name',
      'type',
      'enabled',
      'scanner_group',
      'security_tier',
      'owners_v2',
      'custom_fields',
      'tags',
      'description',
    ]) {
      expect(keys).toContain(common);
    }
    expect(fields.some((f) => f.type === 'password')).toBe(true);
  });

  it('marks only evidenced fields mandatory; credentials are optional password fields', async () => {
    const api = clientFor(emu.url, emu.token);
    const pg = obj(await api.get('/api/v1/ds-connections-types/template/rdb-postgresql')).fields as Array<
      Record<string, unknown>
    >;
    // A source using a stored credential has no username or password (api-notes).
    expect(pg.find((f) => f.apiName === 'password')).toMatchObject({ type: 'password', mandatory: false });
    expect(pg.find((f) => f.apiName === 'username')?.mandatory).toBe(false);
    for (const k of ['rdb_url', 'rdb_name']) expect(pg.find((f) => f.apiName === k)?.mandatory).toBe(true);
    const smb = obj(await api.get('/api/v1/ds-connections-types/template/smb')).fields as Array<
      Record<string, unknown>
    >;
    expect(smb.filter((f) => f.mandatory === true).map((f) => f.apiName)).toEqual([
      'name',
      'type',
      'smbServer',
      'sharedResource',
    ]);
    const s3 = obj(await api.get('/api/v1/ds-connections-types/template/s3')).fields as Array<
      Record<string, unknown>
    >;
    for (const k of ['aws_access_key', 'aws_secret_key']) {
      expect(s3.find((f) => f.apiName === k)).toMatchObject({ type: 'password', mandatory: false });
    }
  });

  it('answers 404 {error} for an unknown type', async () => {
    const r = await clientFor(emu.url, emu.token).get('/api/v1/ds-connections-types/template/no-such-type');
    expect(r.status).toBe(404);
    expect(typeof obj(r).error).toBe('string');
  });
});
