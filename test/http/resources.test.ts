import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeCaseSort, listCases, updateCaseStatus, updateCasesBulk } from '../../src/api/cases.js';
import { createScanProfile, getScanProfile } from '../../src/api/scan-profiles.js';
import { getConnectorTemplate } from '../../src/api/templates.js';
import { ApiError } from '../../src/errors.js';
import { BASE, collect, makeClient, rejectionOf } from './client-fixture.js';

afterEach(() => {
  nock.cleanAll();
});

const CASES = '/api/v1/actionable-insights/all-cases';

describe('listCases', () => {
  it('pages, and fills caseId from caseId ?? id', async () => {
    const cases = Array.from({ length: 130 }, (_, i) =>
      i % 2 === 0 ? { id: `id-${i}`, caseStatus: 'open' } : { caseId: `cid-${i}`, caseStatus: 'open' },
    );
    nock(BASE)
      .persist()
      .get(CASES)
      .query(true)
      .reply((uri) => {
        const p = new URL(uri, BASE).searchParams;
        const skip = Number(p.get('skip'));
        return [200, { status: 'success', data: { cases: cases.slice(skip, skip + 50), totalCount: 130 } }];
      });
    const { client } = makeClient();
    const listed = await collect(listCases(client));
    expect(listed.map((c) => c.caseId)).toEqual(cases.map((c) => ('caseId' in c ? c.caseId : c.id)));
  });

  it('an empty result may omit data.cases', async () => {
    nock(BASE)
      .get(CASES)
      .query(true)
      .reply(200, { status: 'success', data: { totalCount: 0 }, message: null });
    const { client } = makeClient();
    expect(await collect(listCases(client))).toEqual([]);
  });

  it('sends filter, fields and sort in the spec form', async () => {
    let q: URLSearchParams | undefined;
    nock(BASE)
      .get(CASES)
      .query(true)
      .reply((uri) => {
        q = new URL(uri, BASE).searchParams;
        return [200, { data: { cases: [] } }];
      });
    const { client } = makeClient();
    await collect(
      listCases(client, {
        filter: [{ field: 'caseStatus', value: 'open', operator: 'equal' }],
        fields: 'caseId,policyName',
        sort: 'severityLevel:desc',
      }),
    );
    expect(JSON.parse(q?.get('filter') ?? 'null')).toEqual([
      { field: 'caseStatus', value: 'open', operator: 'equal' },
    ]);
    expect(q?.get('fields')).toBe('caseId,policyName');
    expect(q?.get('sort')).toBe('severityLevel DESC');
    expect(encodeCaseSort('a')).toBe('a');
    expect(encodeCaseSort('a DESC')).toBe('a DESC');
  });
});

describe('updateCasesBulk', () => {
  const BULK = '/api/v1/actionable-insights/cases:update';

  it('sends the spec 4.5 body and reads caseIds', async () => {
    const scope = nock(BASE)
      .patch(BULK, {
        type: 'CasesDB',
        subType: 'updateCases',
        additionalProperties: {
          field: 'caseStatus',
          newValue: 'resolved',
          casesFilters: [
            { filterField: 'caseStatus', filterValues: ['open'] },
            { filterField: 'policyName', filterValues: ['PII in S3'] },
          ],
        },
      })
      .reply(200, { caseIds: ['c1', 'c2'] });
    const { client } = makeClient();
    const result = await updateCasesBulk(client, {
      field: 'caseStatus',
      newValue: 'resolved',
      filters: [
        { filterField: 'caseStatus', filterValues: ['open'] },
        { filterField: 'policyName', filterValues: ['PII in S3'] },
      ],
    });
    expect(result).toEqual({ caseIds: ['c1', 'c2'] });
    scope.done();
  });

  it('accepts data.caseIds and retries a transient failure (it is idempotent)', async () => {
    nock(BASE)
      .patch(BULK)
      .reply(503, {})
      .patch(BULK)
      .reply(200, { data: { caseIds: ['c9'] } });
    const { client, sleeps } = makeClient();
    expect(await updateCasesBulk(client, { field: 'assignee', newValue: 'ann', filters: [] })).toEqual({
      caseIds: ['c9'],
    });
    expect(sleeps).toHaveLength(1);
  });
});

describe('updateCaseStatus', () => {
  it('sends {caseStatus, auditReason} and retries a 500', async () => {
    const body = { caseStatus: 'resolved', auditReason: 'fixed in JIRA-1' };
    nock(BASE)
      .patch('/api/v1/actionable-insights/case-status/case%201', body)
      .reply(500, { message: 'x' })
      .patch('/api/v1/actionable-insights/case-status/case%201', body)
      .reply(200, '');
    const { client } = makeClient();
    await expect(updateCaseStatus(client, 'case 1', body)).resolves.toBeUndefined();
    expect(nock.isDone()).toBe(true);
  });

  it('a 404 is an ApiError naming the path', async () => {
    nock(BASE).patch('/api/v1/actionable-insights/case-status/zz').reply(404, { error: 'Case not found' });
    const { client } = makeClient();
    const error = (await rejectionOf(
      updateCaseStatus(client, 'zz', { caseStatus: 'resolved', auditReason: 'r' }),
    )) as ApiError;
    expect(error.message).toBe('PATCH /api/v1/actionable-insights/case-status/zz -> 404: Case not found');
  });
});

describe('getConnectorTemplate', () => {
  it('returns the template with apiName fields', async () => {
    const template = {
      name: 'rdb-mysql',
      fields: [{ apiName: 'rdb_url', name: 'dbUrl', type: 'string', mandatory: true }],
    };
    nock(BASE).get('/api/v1/ds-connections-types/template/rdb-mysql').reply(200, template);
    const { client } = makeClient();
    expect(await getConnectorTemplate(client, 'rdb-mysql')).toEqual(template);
  });

  it('accepts the data envelope', async () => {
    nock(BASE)
      .get('/api/v1/ds-connections-types/template/s3')
      .reply(200, { status: 'success', data: { name: 's3', fields: [{ apiName: 'bucket_name' }] } });
    const { client } = makeClient();
    expect((await getConnectorTemplate(client, 's3'))?.fields.map((f) => f.apiName)).toEqual(['bucket_name']);
  });

  it.each([400, 404])('%i means no such type', async (status) => {
    nock(BASE).get('/api/v1/ds-connections-types/template/nope').reply(status, { error: 'unknown type' });
    const { client } = makeClient();
    expect(await getConnectorTemplate(client, 'nope')).toBeUndefined();
  });
});

describe('scan profiles', () => {
  it('createScanProfile posts once and returns the profile with its _id', async () => {
    const profile = {
      name: 'nightly',
      dataSourceList: ['a'],
      scanTemplateId: 't1',
      schedule: { cronExpression: '0 2 * * *', timeZone: 'UTC' },
    };
    const scope = nock(BASE)
      .post('/api/v1/scanProfiles', profile)
      .reply(200, { ...profile, _id: 'p1' });
    const { client } = makeClient();
    expect(await createScanProfile(client, profile)).toEqual({ ...profile, _id: 'p1' });
    scope.done();
  });

  it('createScanProfile is not retried on a 503', async () => {
    nock(BASE).post('/api/v1/scanProfiles').reply(503, {});
    const spare = nock(BASE).post('/api/v1/scanProfiles').reply(200, { _id: 'p2' });
    const { client } = makeClient();
    await expect(createScanProfile(client, { name: 'x' })).rejects.toBeInstanceOf(ApiError);
    expect(spare.isDone()).toBe(false);
  });

  it('getScanProfile reads data and reports 400 with the service message', async () => {
    nock(BASE)
      .get('/api/v1/scanProfiles/p1')
      .reply(200, { data: { _id: 'p1', name: 'n', dataSourceList: [], scanTemplateId: 't' } })
      .get('/api/v1/scanProfiles/bad')
      .reply(400, { error: 'Invalid scan id' });
    const { client } = makeClient();
    expect((await getScanProfile(client, 'p1'))._id).toBe('p1');
    const error = (await rejectionOf(getScanProfile(client, 'bad'))) as ApiError;
    expect(error.http.serviceMessage).toBe('Invalid scan id');
  });
});
