/**
 * Client resource functions for the next features: update / delete / test a connection, list /
 * update / delete scan profiles, and the reference look-ups (scanners, credentials). Shapes from
 * shared/api-notes.md ("Updating, deleting, testing", "Scan profiles").
 */
import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import {
  deleteConnection,
  readTestOutcome,
  testConnection,
  updateConnection,
} from '../../src/api/connections.js';
import { listCredentials, listScanners } from '../../src/api/references.js';
import { deleteScanProfile, listScanProfiles, updateScanProfile } from '../../src/api/scan-profiles.js';
import { ApiError, UnaddressableNameError, UnavailableError } from '../../src/errors.js';
import { BASE, makeClient, rejectionOf } from './client-fixture.js';

afterEach(() => {
  nock.cleanAll();
});

const BY_NAME = '/api/v1/ds_connections/my%20db';
const unableToLocate = { status: 'error', statusCode: 400, message: 'Unable to locate ds connection my db' };

describe('updateConnection', () => {
  it('PUTs {ds_connection} to the name and returns the connection of the answer', async () => {
    const scope = nock(BASE)
      .put(BY_NAME, { ds_connection: { name: 'my db', type: 's3' } })
      .reply(200, { status: 'success', data: { ds_connection: { _id: 'x1', name: 'my db', type: 's3' } } });
    const { client } = makeClient();
    await expect(updateConnection(client, 'my db', { name: 'my db', type: 's3' })).resolves.toEqual({
      kind: 'done',
      value: { _id: 'x1', name: 'my db', type: 's3' },
    });
    scope.done();
  });

  it('is retried on a 503 (a PUT of the whole object is idempotent); an answer without the object is still done', async () => {
    const scope = nock(BASE).put(BY_NAME).reply(503, 'busy').put(BY_NAME).reply(200, { status: 'success' });
    const { client } = makeClient();
    await expect(updateConnection(client, 'my db', { name: 'my db' })).resolves.toEqual({
      kind: 'done',
      value: undefined,
    });
    scope.done();
  });

  it('400 "Unable to locate" is absent', async () => {
    nock(BASE).put(BY_NAME).reply(400, unableToLocate);
    const { client } = makeClient();
    await expect(updateConnection(client, 'my db', { name: 'my db' })).resolves.toEqual({ kind: 'absent' });
  });

  it('refuses "." before sending anything', async () => {
    const { client } = makeClient();
    expect(await rejectionOf(updateConnection(client, '.', { name: '.' }))).toBeInstanceOf(
      UnaddressableNameError,
    );
  });
});

describe('deleteConnection', () => {
  it('DELETEs by name: done; 400 "Unable to locate": absent; another 400 throws', async () => {
    nock(BASE)
      .delete(BY_NAME)
      .reply(200, { status: 'success' })
      .delete(BY_NAME)
      .reply(400, unableToLocate)
      .delete(BY_NAME)
      .reply(400, { error: 'permission denied' });
    const { client } = makeClient();
    await expect(deleteConnection(client, 'my db')).resolves.toEqual({ kind: 'done', value: undefined });
    await expect(deleteConnection(client, 'my db')).resolves.toEqual({ kind: 'absent' });
    expect(await rejectionOf(deleteConnection(client, 'my db'))).toBeInstanceOf(ApiError);
  });

  it('an unknown outcome (service kept failing) throws UnavailableError for the caller to check by name', async () => {
    nock(BASE).delete(BY_NAME).times(6).reply(502, 'bad gateway');
    const { client } = makeClient();
    const error = await rejectionOf(deleteConnection(client, 'my db'));
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).inDoubt).toBe(true);
  });
});

describe('testConnection', () => {
  it('POSTs {ds_connection, isNewPassword:false} and reads operationStatus', async () => {
    const scope = nock(BASE)
      .post('/api/v1/ds-connection-test', { ds_connection: { name: 'a' }, isNewPassword: false })
      .reply(200, { operationStatus: 'SUCCESS', message: 'Connection succeeded' });
    const { client } = makeClient();
    await expect(testConnection(client, { name: 'a' })).resolves.toEqual({
      kind: 'succeeded',
      message: 'Connection succeeded',
    });
    scope.done();
  });

  it('success:false at HTTP 200 is a failed outcome with the message, not an error', async () => {
    nock(BASE).post('/api/v1/ds-connection-test').reply(200, { success: false, message: 'Access denied' });
    const { client } = makeClient();
    await expect(testConnection(client, { name: 'a' })).resolves.toEqual({
      kind: 'failed',
      message: 'Access denied',
    });
  });

  it('reads both shapes, at the top or in data; anything else is unknown (never guessed)', () => {
    expect(readTestOutcome({ operationStatus: 'FAILED', message: 'no route' })).toEqual({
      kind: 'failed',
      message: 'no route',
    });
    expect(readTestOutcome({ data: { success: true } })).toEqual({ kind: 'succeeded', message: undefined });
    expect(readTestOutcome({ status: 'success' }).kind).toBe('unknown');
    expect(readTestOutcome(undefined).kind).toBe('unknown');
  });
});

describe('scan profiles', () => {
  it('listScanProfiles reads {scanProfiles:[...]} and a data envelope', async () => {
    nock(BASE)
      .get('/api/v1/scanProfiles')
      .reply(200, { scanProfiles: [{ _id: 'p1', name: 'nightly' }] })
      .get('/api/v1/scanProfiles')
      .reply(200, { data: { scanProfiles: [{ _id: 'p2', name: 'weekly' }] } });
    const { client } = makeClient();
    await expect(listScanProfiles(client)).resolves.toEqual([{ _id: 'p1', name: 'nightly' }]);
    await expect(listScanProfiles(client)).resolves.toEqual([{ _id: 'p2', name: 'weekly' }]);
  });

  it('listScanProfiles refuses an answer without an array', async () => {
    nock(BASE).get('/api/v1/scanProfiles').reply(200, { status: 'success' });
    const { client } = makeClient();
    expect(await rejectionOf(listScanProfiles(client))).toBeInstanceOf(ApiError);
  });

  it('updateScanProfile PUTs the profile to its id; deleteScanProfile DELETEs it; 404 is absent', async () => {
    const scope = nock(BASE)
      .put('/api/v1/scanProfiles/p%201', { name: 'nightly', active: false })
      .reply(200, { status: 'success' })
      .delete('/api/v1/scanProfiles/p%201')
      .reply(200, {})
      .delete('/api/v1/scanProfiles/p%201')
      .reply(404, { error: 'not found' });
    const { client } = makeClient();
    await expect(updateScanProfile(client, 'p 1', { name: 'nightly', active: false })).resolves.toEqual({
      kind: 'done',
      value: { name: 'nightly', active: false, _id: 'p 1' },
    });
    await expect(deleteScanProfile(client, 'p 1')).resolves.toEqual({ kind: 'done' });
    await expect(deleteScanProfile(client, 'p 1')).resolves.toEqual({ kind: 'absent' });
    scope.done();
  });
});

describe('references', () => {
  it('listScanners returns the scanners with their scanner_group', async () => {
    nock(BASE)
      .get('/api/v1/scanner-status')
      .reply(200, { data: [{ name: 's1', scanner_group: 'default' }] });
    const { client } = makeClient();
    await expect(listScanners(client)).resolves.toEqual({
      kind: 'available',
      items: [{ name: 's1', scanner_group: 'default' }],
    });
  });

  it('a 404 is not-available (the caller reports "could not be checked"), never an error', async () => {
    nock(BASE)
      .get('/api/v1/scanner-status')
      .reply(404, 'Not Found')
      .get('/api/v1/credentials')
      .reply(404, {});
    const { client } = makeClient();
    await expect(listScanners(client)).resolves.toEqual({ kind: 'not-available' });
    await expect(listCredentials(client)).resolves.toEqual({ kind: 'not-available' });
  });

  it('listCredentials returns credentials by credential_id, with secret-named fields masked', async () => {
    nock(BASE)
      .get('/api/v1/credentials')
      .reply(200, [{ credential_id: 'c1', username: 'u', password: 'hunter2-canary' }]);
    const { client } = makeClient();
    const list = await listCredentials(client);
    expect(list.kind).toBe('available');
    const text = JSON.stringify(list);
    expect(text).toContain('c1');
    expect(text).not.toContain('hunter2-canary');
  });
});
