import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const BASE = 'https://dds-update.test';
const LIST = '/api/v1/actionable-insights/all-cases';
const BULK = '/api/v1/actionable-insights/cases:update';
const env = { DDS_TOKEN: 'update-test-token' };

afterEach(() => {
  nock.cleanAll();
});

const preview = [
  { id: 'c1', caseStatus: 'open', policyName: 'P' },
  { id: 'c2', caseStatus: 'open', policyName: 'P' },
  { id: 'c3', caseStatus: 'open', policyName: 'P' },
];

function serveList(): void {
  nock(BASE)
    .get(LIST)
    .query(true)
    .reply(200, { status: 'success', data: { cases: preview, totalCount: preview.length } });
}

/** `cases update --env BASE --where policyName=P ARGV`, as a user would type it. */
function updateCases(argv: readonly string[]) {
  return runCli(['cases', 'update', '--env', BASE, '--where', 'policyName=P', ...argv], { env });
}

async function auditLines(file: string): Promise<Record<string, unknown>[]> {
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('cases update against a service (nock)', () => {
  it('sends the spec body and warns when the reported ids differ from the preview', async () => {
    serveList();
    // The read-back of c3, not reported: still open.
    serveList();
    let body: unknown;
    nock(BASE)
      .patch(BULK, (b: unknown) => {
        body = b;
        return true;
      })
      .reply(200, { status: 'success', data: { caseIds: ['c1', 'c2', 'c9'] } });
    const audit = join(await makeTempDir('cases-update-'), 'audit.jsonl');
    const run = await updateCases([
      '--where',
      'caseStatus=open',
      '--set',
      'caseStatus=resolved',
      '--yes',
      '--audit',
      audit,
    ]);
    expect(run.exitCode).toBe(0);
    expect(body).toEqual({
      type: 'CasesDB',
      subType: 'updateCases',
      additionalProperties: {
        field: 'caseStatus',
        newValue: 'resolved',
        casesFilters: [
          { filterField: 'policyName', filterValues: ['P'] },
          { filterField: 'caseStatus', filterValues: ['open'] },
        ],
      },
    });
    expect(run.stdout.trim().split('\n')).toEqual(['c1', 'c2', 'c9']);
    expect(run.stderr).toMatch(/warning: .*not reported: c3.*not in the preview: c9/);
    const last = (await auditLines(audit)).at(-1);
    expect(last).toMatchObject({
      event: 'updated',
      caseIds: ['c1', 'c2', 'c9'],
      missing: ['c3'],
      unexpected: ['c9'],
      matched: 3,
    });
  });

  it('an answer lost and the PATCH sent again (reporting none): the cases are read back and counted updated', async () => {
    serveList();
    let patches = 0;
    nock(BASE)
      .patch(BULK)
      .times(2)
      .reply(() => {
        patches += 1;
        // The first is applied and its answer lost; the second matches nothing any more.
        if (patches === 1) return [502, 'Bad Gateway'];
        return [200, { status: 'success', data: { caseIds: [] } }];
      });
    let readBackFilter: unknown;
    nock(BASE)
      .get(LIST)
      .query((q) => {
        readBackFilter = JSON.parse(String(q.filter));
        return true;
      })
      .reply(200, {
        status: 'success',
        data: { cases: preview.map((c) => ({ ...c, caseStatus: 'resolved' })), totalCount: 3 },
      });
    const audit = join(await makeTempDir('cases-update-'), 'audit.jsonl');
    const run = await updateCases(['--set', 'caseStatus=resolved', '--yes', '--audit', audit]);
    expect(run.exitCode).toBe(0);
    expect(patches).toBe(2);
    expect(readBackFilter).toEqual([{ field: 'id', value: ['c1', 'c2', 'c3'], operator: 'in' }]);
    expect(run.stdout.trim().split('\n')).toEqual(['c1', 'c2', 'c3']);
    expect(run.stderr).toMatch(/3 case\(s\) updated/);
    expect(run.stderr).toMatch(/not reported, read back with caseStatus = resolved: c1, c2, c3/);
    expect((await auditLines(audit)).at(-1)).toMatchObject({
      event: 'updated',
      caseIds: [],
      readBack: ['c1', 'c2', 'c3'],
      missing: [],
    });
  });

  it('keeps the before-states and the failure in the audit when the PATCH is refused (exit 1)', async () => {
    serveList();
    nock(BASE).patch(BULK).reply(400, { error: 'Unsupported filter field' });
    const audit = join(await makeTempDir('cases-update-'), 'audit.jsonl');
    const run = await updateCases(['--set', 'assignee=ana', '--yes', '--audit', audit]);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/400: Unsupported filter field/);
    const lines = await auditLines(audit);
    expect(lines.map((l) => l.event)).toEqual(['matched', 'matched', 'matched', 'failed']);
    expect(lines[0]).toMatchObject({
      caseId: 'c1',
      before: { caseStatus: 'open' },
      change: { field: 'assignee', newValue: 'ana' },
    });
    expect(lines[3]?.error).toMatch(/Unsupported filter field/);
  });

  it('an audit file that cannot be written stops the run before the PATCH (exit 2)', async () => {
    serveList();
    const patch = nock(BASE).patch(BULK).reply(200, { caseIds: [] });
    const run = await updateCases([
      '--set',
      'assignee=ana',
      '--yes',
      '--audit',
      '/nonexistent-dir/audit.jsonl',
    ]);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/Cannot write the audit file/);
    expect(patch.isDone()).toBe(false);
  });
});
