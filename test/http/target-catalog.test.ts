/**
 * The catalog of an environment's own templates (`import --templates-from-target`, `validate
 * --templates-from`) asks for every type's template at once: the service answers here only once it
 * holds all of them, so a client that waited for each answer before the next request would never get
 * one (its deadline ends the read instead).
 */
import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import type { Connection } from '../../src/model/connection.js';
import { loadCatalogFromEnvironment } from '../../src/validate/target-catalog.js';
import { BASE, makeClient } from './client-fixture.js';

afterEach(() => {
  nock.cleanAll();
});

const TYPES = ['s3', 'rdb-mysql', 'gcp-big-query'];

describe('loadCatalogFromEnvironment', () => {
  it('sends the template requests together and builds the catalog in name order', async () => {
    const held: (() => void)[] = [];
    const asked: string[] = [];
    nock(BASE)
      .get(/\/api\/v1\/ds-connections-types\/template\/.+/)
      .times(TYPES.length)
      .reply((uri, _body, callback) => {
        const type = decodeURIComponent(uri.split('/').pop() ?? '');
        asked.push(type);
        held.push(() =>
          callback(null, [200, { name: type, fields: [{ apiName: 'name', name: 'name', mandatory: true }] }]),
        );
        // Answered only when every request has arrived.
        if (held.length === TYPES.length) for (const answer of held) answer();
      });
    const { client } = makeClient({}, { deadlineMs: 5_000 });
    const catalog = await loadCatalogFromEnvironment(client, [...TYPES, 's3']);
    expect(asked.sort()).toEqual([...TYPES].sort());
    expect(catalog.types()).toEqual([...TYPES].sort());
    expect(catalog.checkEntry({ name: 'x', type: 's3' } as Connection).errors).toEqual([]);
  });
});
