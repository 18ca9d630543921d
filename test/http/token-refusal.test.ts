/**
 * A refused token, however the service says it (api-notes [seen]: `GET /api/v1/ds-connections` with an
 * invalid token answered `200`, `text/html; charset=utf-8`, `{"success":false,"message":"Failed to
 * authenticate token."}`; the spec: 401; the exchange: `success:false` at 200): an AuthError (exit 4)
 * whose hint names where the token was read, never the token, and no retry (one re-exchange when there
 * is a user token, as after a 401).
 */
import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { isTokenRefusal } from '../../src/api/classify.js';
import { createConnection, exportConnections, listConnections } from '../../src/api/connections.js';
import { ApiError, AuthError } from '../../src/errors.js';
import { BASE, collect, makeClient, rejectionOf, TOKEN } from './client-fixture.js';

afterEach(() => {
  nock.cleanAll();
});

const LIST = '/api/v1/ds-connections';
const REFUSAL = { success: false, message: 'Failed to authenticate token.' };
const HTML = { 'content-type': 'text/html; charset=utf-8' };

describe('isTokenRefusal', () => {
  it.each([
    [200, REFUSAL, true],
    [403, REFUSAL, true],
    [200, { status: 'error', message: 'Authentication failed' }, true],
    [200, { success: false, statusCode: 401 }, true],
    [200, { success: false, message: 'Unauthorized' }, true],
    [400, { success: false, message: 'aws_session_token is invalid' }, false],
    [400, { error: 'Data source x already exists' }, false],
    [200, { success: true, message: 'Failed to authenticate token.' }, false],
    [500, { success: false, message: 'Failed to authenticate token.' }, false],
    [200, 'Failed to authenticate token.', false],
  ])('status %i with %j: %s', (status, body, expected) => {
    expect(isTokenRefusal(status, body)).toBe(expected);
  });
});

describe('a refused token on a data endpoint', () => {
  it('200 text/html {"success":false} is an AuthError naming the variable, sent once', async () => {
    const scope = nock(BASE).get(LIST).query(true).once().reply(200, JSON.stringify(REFUSAL), HTML);
    const { client } = makeClient({ tokenSource: 'DDS_PROD_TOKEN (tokenEnv of prod)', label: 'prod' });
    const error = (await rejectionOf(collect(listConnections(client)))) as AuthError;
    expect(error).toBeInstanceOf(AuthError);
    expect(error.exitCode).toBe(4);
    expect(error.toUserLine()).toBe(
      'The service rejected the token of prod (GET /api/v1/ds-connections -> 200: Failed to authenticate token.). Check the token in DDS_PROD_TOKEN (tokenEnv of prod) and that it is valid for prod',
    );
    expect(error.toUserLine()).not.toContain(TOKEN);
    scope.done();
    expect(nock.pendingMocks()).toEqual([]);
  });

  it('the same answer to the export download (a streamed body) is an AuthError too', async () => {
    nock(BASE)
      .get(`${LIST}/file-download/export`)
      .query(true)
      .once()
      .reply(200, JSON.stringify(REFUSAL), HTML);
    const { client } = makeClient({ tokenSource: 'DDS_SOURCE_TOKEN' });
    const error = (await rejectionOf(collect(exportConnections(client)))) as AuthError;
    expect(error).toBeInstanceOf(AuthError);
    expect(error.hint).toContain('DDS_SOURCE_TOKEN');
  });

  it('a create answered with the refusal is an AuthError, not a failed entry', async () => {
    nock(BASE).post('/api/v1/ds_connections').once().reply(403, REFUSAL);
    const { client } = makeClient();
    const error = await rejectionOf(createConnection(client, { name: 'a', type: 's3' }));
    expect(error).toBeInstanceOf(AuthError);
  });

  it("an entry's own error that mentions a token stays an ApiError of that entry", async () => {
    nock(BASE)
      .post('/api/v1/ds_connections')
      .once()
      .reply(400, { success: false, message: 'aws_session_token is invalid' });
    const { client } = makeClient();
    const error = await rejectionOf(createConnection(client, { name: 'a', type: 's3' }));
    expect(error).toBeInstanceOf(ApiError);
  });

  it('with a user token: one re-exchange, then the request again with the new session token', async () => {
    const scope = nock(BASE)
      .get(LIST)
      .query(true)
      .matchHeader('authorization', 'Bearer old-session')
      .reply(200, JSON.stringify(REFUSAL), HTML)
      .get('/api/v1/refresh-access-token')
      .reply(200, { success: true, systemToken: 'new-session-9f' })
      .get(LIST)
      .query(true)
      .matchHeader('authorization', 'Bearer new-session-9f')
      .reply(200, { data: { ds_connections: [{ _id: 'x', name: 'a', type: 's3' }], totalCount: 1 } });
    const { client } = makeClient({ token: 'old-session', refreshToken: 'user-token-1' });
    expect(await collect(listConnections(client))).toHaveLength(1);
    scope.done();
  });

  it('the exchange refused with the same answer names the user token variable', async () => {
    nock(BASE).get('/api/v1/refresh-access-token').once().reply(200, JSON.stringify(REFUSAL), HTML);
    const { client } = makeClient({
      token: undefined,
      refreshToken: 'user-token-2',
      tokenSource: 'DDS_PROD_USER_TOKEN (refreshTokenEnv of prod)',
      refreshTokenSource: 'DDS_PROD_USER_TOKEN (refreshTokenEnv of prod)',
    });
    const error = (await rejectionOf(collect(listConnections(client)))) as AuthError;
    expect(error).toBeInstanceOf(AuthError);
    expect(error.message).toMatch(/^The service refused to exchange the user token of test/);
    expect(error.hint).toBe('Check the user token in DDS_PROD_USER_TOKEN (refreshTokenEnv of prod)');
    expect(error.toUserLine()).not.toContain('user-token-2');
  });
});
