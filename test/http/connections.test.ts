import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createConnection,
  exportConnections,
  getConnectionByName,
  listConnections,
} from '../../src/api/connections.js';
import { InconsistentListError } from '../../src/api/paging.js';
import { ApiError, UnavailableError } from '../../src/errors.js';
import { BASE, collect, makeClient, rejectionOf } from './client-fixture.js';

afterEach(() => {
  nock.cleanAll();
});

const LIST = '/api/v1/ds-connections';

function makeConnections(n: number, type = 's3'): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => ({
    _id: i.toString(16).padStart(24, '0'),
    name: `conn-${String(i).padStart(4, '0')}`,
    type,
    enabled: i % 2 === 0 ? 'yes' : true,
  }));
}

/** A nock server that clamps `limit` to `max` and answers the real envelope; records the queries. */
function serveClamped(
  all: readonly Record<string, unknown>[],
  max: number,
  withTotal = true,
): URLSearchParams[] {
  const seen: URLSearchParams[] = [];
  nock(BASE)
    .persist()
    .get(LIST)
    .query(true)
    .reply((uri) => {
      const params = new URL(uri, BASE).searchParams;
      seen.push(params);
      const skip = Number(params.get('skip') ?? 0);
      const limit = Math.min(Number(params.get('limit') ?? 100), max);
      const data: Record<string, unknown> = { ds_connections: all.slice(skip, skip + limit) };
      if (withTotal) data.totalCount = all.length;
      return [200, { status: 'success', statusCode: 200, data, message: null }];
    });
  return seen;
}

describe('listConnections', () => {
  it('pages through clamped pages (asks 1000, gets 100) until totalCount', async () => {
    const all = makeConnections(250);
    const seen = serveClamped(all, 100);
    const { client } = makeClient();
    const listed = await collect(listConnections(client));
    expect(listed.map((c) => c.name)).toEqual(all.map((c) => c.name));
    // Read twice: a list of more than one page is verified by a second read.
    expect(seen.map((p) => p.get('skip'))).toEqual(['0', '100', '200', '0', '100', '200']);
    expect(seen.every((p) => p.get('limit') === '1000' && p.get('requireTotalCount') === 'true')).toBe(true);
  });

  it('without totalCount, keeps paging past a clamped page and stops on a shorter one', async () => {
    const all = makeConnections(250);
    const seen = serveClamped(all, 100, false);
    const { client } = makeClient();
    const listed = await collect(listConnections(client));
    expect(listed).toHaveLength(250);
    expect(seen.map((p) => p.get('skip'))).toEqual(['0', '100', '200', '0', '100', '200']);
  });

  it('without totalCount, an exact multiple of the page ends on an empty page', async () => {
    const all = makeConnections(200);
    const seen = serveClamped(all, 100, false);
    const { client } = makeClient();
    expect(await collect(listConnections(client))).toHaveLength(200);
    expect(seen.map((p) => p.get('skip'))).toEqual(['0', '100', '200', '0', '100', '200']);
  });

  it('stops at totalCount without asking for an empty page', async () => {
    const all = makeConnections(100);
    const seen = serveClamped(all, 50);
    const { client } = makeClient();
    expect(await collect(listConnections(client, { pageSize: 50 }))).toHaveLength(100);
    expect(seen.map((p) => p.get('skip'))).toEqual(['0', '50', '0', '50']);
  });

  it('accepts data as the array itself and JSON labelled text/html', async () => {
    nock(BASE)
      .persist()
      .get(LIST)
      .query(true)
      .reply((uri) => {
        const skip = Number(new URL(uri, BASE).searchParams.get('skip'));
        const page = skip === 0 ? makeConnections(3) : [];
        return [200, JSON.stringify({ data: page }), { 'Content-Type': 'text/html; charset=utf-8' }];
      });
    const { client } = makeClient();
    expect(await collect(listConnections(client))).toHaveLength(3);
  });

  it('sends the filter as a JSON array and the sort as given', async () => {
    let query: URLSearchParams | undefined;
    nock(BASE)
      .get(LIST)
      .query(true)
      .reply((uri) => {
        query = new URL(uri, BASE).searchParams;
        return [200, { data: { ds_connections: [], totalCount: 0 } }];
      });
    const { client } = makeClient();
    await collect(
      listConnections(client, {
        filter: [{ field: 'type', value: ['s3', 'smb'], operator: 'in' }],
        sort: 'name:desc',
      }),
    );
    expect(JSON.parse(query?.get('filter') ?? 'null')).toEqual([
      { field: 'type', value: ['s3', 'smb'], operator: 'in' },
    ]);
    expect(query?.get('sort')).toBe('name:desc');
  });

  it('refuses a service that ignores skip and offset instead of looping forever (exit 5)', async () => {
    nock(BASE)
      .persist()
      .get(LIST)
      .query(true)
      .reply(200, { data: { ds_connections: makeConnections(10), totalCount: 50 } });
    const { client } = makeClient();
    const error = (await rejectionOf(collect(listConnections(client)))) as InconsistentListError;
    expect(error).toBeInstanceOf(InconsistentListError);
    expect(error.reason).toBe('paging-ignored');
    expect(error.exitCode).toBe(5);
    expect(error.message).toContain('honours neither skip nor offset');
  });

  it('an unexpected envelope is a 502-like ApiError', async () => {
    nock(BASE)
      .get(LIST)
      .query(true)
      .reply(200, { data: { something: 'else' }, status: 'success' });
    const { client } = makeClient();
    const error = (await rejectionOf(collect(listConnections(client)))) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(502);
  });

  it('keeps mixed-typed values verbatim', async () => {
    const one = {
      _id: 'a'.repeat(24),
      name: 'x',
      type: 's3',
      enabled: 'yes',
      security_tier: '1',
      is_ocr_enabled: 'false',
    };
    nock(BASE)
      .get(LIST)
      .query(true)
      .reply(200, { data: { ds_connections: [one], totalCount: 1 } });
    const { client } = makeClient();
    expect(await collect(listConnections(client))).toEqual([one]);
  });
});

describe('exportConnections', () => {
  const EXPORT = '/api/v1/ds-connections/file-download/export';

  it('streams each element of the exported array', async () => {
    const all = makeConnections(5);
    nock(BASE).get(EXPORT).reply(200, JSON.stringify(all), { 'Content-Type': 'application/octet-stream' });
    const { client } = makeClient();
    expect(await collect(exportConnections(client))).toEqual(all);
  });

  it('passes ids as a comma-separated list', async () => {
    const scope = nock(BASE).get(EXPORT).query({ ids: 'a,b' }).reply(200, '[]');
    const { client } = makeClient();
    expect(await collect(exportConnections(client, { ids: ['a', 'b'] }))).toEqual([]);
    scope.done();
  });

  it('an HTML page instead of JSON is a 502, retried, then exit 5', async () => {
    nock(BASE).get(EXPORT).times(2).reply(200, '<!DOCTYPE html><html><title>502 Bad Gateway</title></html>');
    const { client } = makeClient({}, { retryPolicy: { retries: 1 } });
    const error = (await rejectionOf(collect(exportConnections(client)))) as UnavailableError;
    expect(error).toBeInstanceOf(UnavailableError);
    expect(error.http?.status).toBe(502);
  });

  it('a truncated body is a 502 ApiError', async () => {
    nock(BASE).get(EXPORT).reply(200, '[{"name":"a","type":"s3"},{"name":"b"');
    const { client } = makeClient();
    const error = (await rejectionOf(collect(exportConnections(client)))) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(502);
  });

  it('a JSON object instead of an array is a 502 ApiError', async () => {
    nock(BASE).get(EXPORT).reply(200, '{"status":"success","data":[]}');
    const { client } = makeClient();
    const error = (await rejectionOf(collect(exportConnections(client)))) as ApiError;
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(502);
  });
});

describe('createConnection', () => {
  const CREATE = '/api/v1/ds_connections';

  it('posts {ds_connection} and reads name and _id from data', async () => {
    const connection = { name: 'fin (eu): s3', type: 's3', enabled: 'yes' };
    const scope = nock(BASE)
      .post(CREATE, { ds_connection: connection })
      .reply(200, { status: 'success', data: { name: 'fin (eu): s3', _id: 'b'.repeat(24) } });
    const { client } = makeClient();
    expect(await createConnection(client, connection)).toEqual({ name: 'fin (eu): s3', _id: 'b'.repeat(24) });
    scope.done();
  });

  it('reads a top-level name and falls back to the sent name', async () => {
    nock(BASE).post(CREATE).reply(200, { name: 'x1' }).post(CREATE).reply(200, '');
    const { client } = makeClient();
    expect(await createConnection(client, { name: 'x1', type: 's3' })).toEqual({
      name: 'x1',
      _id: undefined,
    });
    expect(await createConnection(client, { name: 'x2', type: 's3' })).toEqual({
      name: 'x2',
      _id: undefined,
    });
  });

  it('a duplicate (400 already exists) is an ApiError, sent once', async () => {
    const scope = nock(BASE).post(CREATE).reply(400, { error: 'Data source x already exists' });
    const { client, sleeps } = makeClient();
    const error = (await rejectionOf(createConnection(client, { name: 'x', type: 's3' }))) as ApiError;
    expect(error.status).toBe(400);
    expect(error.http.serviceMessage).toContain('already exists');
    expect(sleeps).toEqual([]);
    scope.done();
  });

  it('a 500 is not retried', async () => {
    const scope = nock(BASE).post(CREATE).reply(500, { status: 'error', message: 'boom', errors: [] });
    const spare = nock(BASE).post(CREATE).reply(200, {});
    const { client } = makeClient();
    const error = (await rejectionOf(createConnection(client, { name: 'x', type: 's3' }))) as ApiError;
    expect(error.status).toBe(500);
    expect(error.isTransient()).toBe(true);
    scope.done();
    expect(spare.isDone()).toBe(false);
  });
});

describe('getConnectionByName', () => {
  it('encodes the name and returns the connection', async () => {
    const connection = { _id: 'c'.repeat(24), name: 'hr db (prod)', type: 'rdb-mysql' };
    const scope = nock(BASE)
      .get('/api/v1/ds_connections/hr%20db%20(prod)')
      .reply(200, { status: 'success', data: { ds_connection: connection } });
    const { client } = makeClient();
    expect(await getConnectionByName(client, 'hr db (prod)')).toEqual(connection);
    scope.done();
  });

  it('400 "Unable to locate" means not found', async () => {
    nock(BASE).get('/api/v1/ds_connections/nope').reply(400, { error: 'Unable to locate data source nope' });
    const { client } = makeClient();
    expect(await getConnectionByName(client, 'nope')).toBeUndefined();
  });

  it('404 means not found', async () => {
    nock(BASE).get('/api/v1/ds_connections/nope').reply(404, { error: 'not found' });
    const { client } = makeClient();
    expect(await getConnectionByName(client, 'nope')).toBeUndefined();
  });

  it('another 400 is an error', async () => {
    nock(BASE).get('/api/v1/ds_connections/bad').reply(400, { error: 'Invalid name' });
    const { client } = makeClient();
    await expect(getConnectionByName(client, 'bad')).rejects.toBeInstanceOf(ApiError);
  });

  it('accepts the connection at the top level', async () => {
    nock(BASE).get('/api/v1/ds_connections/a').reply(200, { name: 'a', type: 's3' });
    const { client } = makeClient();
    expect(await getConnectionByName(client, 'a')).toEqual({ name: 'a', type: 's3' });
  });
});
