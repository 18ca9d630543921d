/**
 * The client reads a recorded real list answer verbatim: the body of a vendor sandbox's
 * `GET /api/v1/ds-connections` (fixtures/recorded/sandbox-ds-connections, source in its README),
 * replayed through nock, labelled `text/html` as some deployments do.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { listConnections } from '../../src/api/connections.js';
import { fixturesDir } from '../../src/paths.js';
import { BASE, collect, makeClient } from './client-fixture.js';

const RECORDED = join(fixturesDir(), 'recorded', 'sandbox-ds-connections', 'ds-connections.json');

afterEach(() => {
  nock.cleanAll();
});

describe('listConnections on a recorded answer', () => {
  it('reads all 20 connections with every value and type kept (no coercion, nothing dropped)', async () => {
    const text = await readFile(RECORDED, 'utf8');
    const body = JSON.parse(text) as {
      data: { ds_connections: Record<string, unknown>[]; totalCount: number };
    };
    nock(BASE)
      .get('/api/v1/ds-connections')
      .query(true)
      .reply(200, text, { 'content-type': 'text/html; charset=utf-8' });
    const { client } = makeClient();
    const listed = await collect(listConnections(client));
    expect(listed).toEqual(body.data.ds_connections);
    const models = listed.find((c) => c.name === 'Models') as Record<string, unknown>;
    expect(models.enabled).toBe('no');
    expect(models.awsAuthStrategy).toBe(4);
    expect(listed.find((c) => c.name === 'Sales Drive')?.scan_scope).toBe('myDrive');
  });
});
