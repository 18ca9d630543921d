/** Conformance: security cases (spec 2.3, 3, 4.4, 4.5, 4.6; api-notes on cases). */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningEmulator, type SeedCase, startEmulator } from '../../src/emulator/index.js';
import { clientFor, obj } from './raw-http.js';

const POLICIES = ['PCI', 'GDPR', 'HIPAA'];
const SEVERITIES = ['critical', 'high', 'medium', 'low'];
const STATUSES = ['open', 'acknowledged', 'silenced', 'resolved', 'remediated'];

function seedCases(n: number): SeedCase[] {
  return Array.from({ length: n }, (_, i) => ({
    // Seeds may give only one of the two ids: the emulator fills the other.
    ...(i % 2 === 0
      ? { id: `case-${String(i).padStart(3, '0')}` }
      : { caseId: `case-${String(i).padStart(3, '0')}` }),
    caseLabel: `Case ${i}`,
    policyName: POLICIES[i % 3],
    severityLevel: SEVERITIES[i % 4],
    assignee: i % 5 === 0 ? 'alice@example.com' : 'bob@example.com',
    dataSourceName: `ds-${i % 7}`,
    caseStatus: STATUSES[i % 5],
  }));
}

describe('security cases', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof clientFor>;
  beforeEach(async () => {
    emu = await startEmulator({ data: { cases: seedCases(150) } });
    api = clientFor(emu.url, emu.token);
  });
  afterEach(() => emu.close());

  const list = async (query: string) => {
    const r = await api.get(`/api/v1/actionable-insights/all-cases${query}`);
    expect(r.status).toBe(200);
    return obj(r);
  };

  it('lists in the real envelope; every case carries id and caseId with the same value', async () => {
    const body = await list('');
    expect(body.status).toBe('success');
    expect(body.statusCode).toBe(200);
    expect(body.data.totalCount).toBe(150);
    expect(body.data.cases).toHaveLength(100);
    for (const c of body.data.cases) {
      expect(c.id).toBe(c.caseId);
      for (const k of [
        'caseLabel',
        'policyName',
        'severityLevel',
        'assignee',
        'dataSourceName',
        'caseStatus',
      ]) {
        expect(c).toHaveProperty(k);
      }
      expect(SEVERITIES).toContain(c.severityLevel);
    }
  });

  it('pages with skip and limit', async () => {
    const page = await list('?skip=140&limit=20&requireTotalCount=true');
    expect(page.data.cases).toHaveLength(10);
    expect(page.data.totalCount).toBe(150);
  });

  it('filters with the tutorial JSON object form', async () => {
    const body = await list(
      `?limit=1000&filter=${encodeURIComponent(JSON.stringify({ caseStatus: 'open' }))}`,
    );
    expect(body.data.totalCount).toBe(30);
    expect(body.data.cases.every((c: { caseStatus: string }) => c.caseStatus === 'open')).toBe(true);
  });

  it('filters with the JSON array form', async () => {
    const filter = [
      { field: 'caseStatus', value: ['open', 'acknowledged'], operator: 'in' },
      { field: 'severityLevel', value: 'critical', operator: 'equal' },
    ];
    const body = await list(`?limit=1000&filter=${encodeURIComponent(JSON.stringify(filter))}`);
    const expected = emu.store.cases.filter(
      (c) => ['open', 'acknowledged'].includes(c.caseStatus) && c.severityLevel === 'critical',
    ).length;
    expect(body.data.totalCount).toBe(expected);
  });

  it('omits cases from an empty result, as real deployments may', async () => {
    const body = await list(`?filter=${encodeURIComponent(JSON.stringify({ caseStatus: 'nothing' }))}`);
    expect(body.data.totalCount).toBe(0);
    expect(body.data.cases).toBeUndefined();
  });

  it('projects fields, always keeping id and caseId', async () => {
    const body = await list('?limit=3&fields=policyName,severityLevel');
    for (const c of body.data.cases)
      expect(Object.keys(c).sort()).toEqual(['caseId', 'id', 'policyName', 'severityLevel']);
  });

  it.each([
    ['caseLabel', false],
    ['caseLabel DESC', true],
    ['caseLabel ASC', false],
    ['caseLabel:desc', true],
  ])('sorts by %s', async (sort, descending) => {
    const body = await list(`?limit=10&sort=${encodeURIComponent(sort)}`);
    const labels = emu.store.cases.map((c) => String(c.caseLabel)).sort();
    expect(body.data.cases.map((c: { caseLabel: string }) => c.caseLabel)).toEqual(
      (descending ? labels.reverse() : labels).slice(0, 10),
    );
  });

  it('answers 400 {error} to a filter that is not JSON', async () => {
    const r = await api.get('/api/v1/actionable-insights/all-cases?filter=caseStatus%3Dopen');
    expect(r.status).toBe(400);
    expect(typeof obj(r).error).toBe('string');
  });

  const bulk = (
    field: string,
    newValue: string,
    casesFilters: unknown,
    extra: Record<string, unknown> = {},
  ) => ({
    type: 'CasesDB',
    subType: 'updateCases',
    additionalProperties: { field, newValue, casesFilters, ...extra },
    ...extra,
  });

  it('bulk-resolves exactly the cases matching every filter and lists their ids in caseIds', async () => {
    const expected = emu.store.cases
      .filter((c) => c.caseStatus === 'open' && c.policyName === 'PCI')
      .map((c) => String(c.id));
    expect(expected.length).toBeGreaterThan(0);
    const r = await api.patch(
      '/api/v1/actionable-insights/cases:update',
      bulk('caseStatus', 'resolved', [
        { filterField: 'caseStatus', filterValues: ['open'] },
        { filterField: 'policyName', filterValues: ['PCI'] },
      ]),
    );
    expect(r.status).toBe(200);
    expect(obj(r).caseIds).toEqual(expected);
    expect(obj(r).data.caseIds).toEqual(expected);
    for (const id of expected) expect(emu.store.getCase(id)?.caseStatus).toBe('resolved');
    // Open cases of other policies are untouched.
    expect(emu.store.cases.filter((c) => c.caseStatus === 'open')).toHaveLength(30 - expected.length);
  });

  it('bulk-sets the assignee without changing the status', async () => {
    const targets = emu.store.cases.filter((c) => c.policyName === 'HIPAA');
    const statuses = targets.map((c) => c.caseStatus);
    const r = await api.patch(
      '/api/v1/actionable-insights/cases:update',
      bulk('assignee', 'carol@example.com', [{ filterField: 'policyName', filterValues: ['HIPAA'] }]),
    );
    expect(r.status).toBe(200);
    expect(obj(r).caseIds).toHaveLength(targets.length);
    expect(targets.map((c) => c.assignee)).toEqual(targets.map(() => 'carol@example.com'));
    expect(targets.map((c) => c.caseStatus)).toEqual(statuses);
  });

  it.each([
    [
      'another action type',
      '/api/v1/actionable-insights/cases:delete',
      bulk('caseStatus', 'resolved', [{ filterField: 'policyName', filterValues: ['PCI'] }]),
    ],
    [
      'a field other than caseStatus or assignee',
      undefined,
      bulk('severityLevel', 'low', [{ filterField: 'policyName', filterValues: ['PCI'] }]),
    ],
    [
      'an unknown status',
      undefined,
      bulk('caseStatus', 'archived', [{ filterField: 'policyName', filterValues: ['PCI'] }]),
    ],
    ['no filters', undefined, bulk('caseStatus', 'resolved', [])],
    [
      'a wrong type',
      undefined,
      {
        ...bulk('caseStatus', 'resolved', [{ filterField: 'policyName', filterValues: ['PCI'] }]),
        type: 'X',
      },
    ],
  ])('refuses a bulk update with %s (400 {error}), changing nothing', async (_label, path, body) => {
    const before = JSON.stringify(emu.store.cases);
    const r = await api.patch(path ?? '/api/v1/actionable-insights/cases:update', body);
    expect(r.status).toBe(400);
    expect(typeof obj(r).error).toBe('string');
    expect(JSON.stringify(emu.store.cases)).toBe(before);
  });

  it('resolves one case, keeping auditReason with the change', async () => {
    const open = emu.store.cases.find((c) => c.caseStatus === 'open')!;
    const r = await api.patch(`/api/v1/actionable-insights/case-status/${open.id}`, {
      caseStatus: 'resolved',
      auditReason: 'False positive: test data',
    });
    expect(r.status).toBe(200);
    expect(emu.store.getCase(String(open.id))?.caseStatus).toBe('resolved');
    expect(emu.store.caseAudit.at(-1)).toMatchObject({
      caseId: open.id,
      field: 'caseStatus',
      from: 'open',
      to: 'resolved',
      reason: 'False positive: test data',
      via: 'case-status',
    });
  });

  it('answers 404 {error} for an unknown case and 400 for an unknown status', async () => {
    const unknown = await api.patch('/api/v1/actionable-insights/case-status/no-such-case', {
      caseStatus: 'resolved',
      auditReason: 'x',
    });
    expect(unknown.status).toBe(404);
    expect(typeof obj(unknown).error).toBe('string');
    const bad = await api.patch(`/api/v1/actionable-insights/case-status/${emu.store.cases[0]!.id}`, {
      caseStatus: 'gone',
    });
    expect(bad.status).toBe(400);
  });
});
