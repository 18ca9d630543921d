import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { listCases } from '../../src/api/cases.js';
import { fixturesDir } from '../../src/paths.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { makeClient } from './client-fixture.js';

const BASE = 'https://dds-cases.test';
const PATH = '/api/v1/actionable-insights/all-cases';
const env = { DDS_TOKEN: 'cases-test-token' };

afterEach(() => {
  nock.cleanAll();
});

function makeCases(n: number, from = 0): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `case-${String(from + i).padStart(4, '0')}`,
    caseStatus: 'open',
    severityLevel: 'high',
    policyName: 'P',
    caseLabel: `label ${from + i}`,
  }));
}

function envelope(
  cases: Record<string, unknown>[] | undefined,
  totalCount?: number,
): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  if (cases !== undefined) data.cases = cases;
  if (totalCount !== undefined) data.totalCount = totalCount;
  return { status: 'success', statusCode: 200, data, message: null };
}

/**
 * A service that clamps every page to `clamp` items (or to what `clamp` says for the page's `skip`) out
 * of `all`, with or without `totalCount`.
 */
function serveClamped(
  all: Record<string, unknown>[],
  clamp: number | ((skip: number) => number),
  withTotal: boolean,
  seen: URLSearchParams[],
): nock.Scope {
  return nock(BASE)
    .get(PATH)
    .query(true)
    .reply((uri) => {
      const q = new URL(uri, BASE).searchParams;
      seen.push(q);
      const skip = Number(q.get('skip') ?? 0);
      const limit = Math.min(Number(q.get('limit') ?? 100), typeof clamp === 'number' ? clamp : clamp(skip));
      const page = all.slice(skip, skip + limit);
      return [200, envelope(page.length > 0 ? page : undefined, withTotal ? all.length : undefined)];
    })
    .persist();
}

function ndjsonIds(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => String((JSON.parse(l) as { caseId: unknown }).caseId));
}

describe('cases list paging', () => {
  it('reads every page when the service clamps the limit and says totalCount', async () => {
    const all = makeCases(250);
    const seen: URLSearchParams[] = [];
    serveClamped(all, 100, true, seen);
    const run = await runCli(['cases', 'list', '--env', BASE, '--format', 'ndjson'], { env });
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    expect(ndjsonIds(run.stdout)).toEqual(all.map((c) => c.id));
    expect(seen.map((q) => q.get('skip'))).toEqual(['0', '100', '200']);
  });

  it('stops at a short page without totalCount, and on an empty page that omits the cases key', async () => {
    const all = makeCases(200);
    const seen: URLSearchParams[] = [];
    serveClamped(all, 100, false, seen);
    const run = await runCli(['cases', 'list', '--env', BASE, '--format', 'ndjson'], { env });
    expect(run.exitCode).toBe(0);
    expect(ndjsonIds(run.stdout)).toEqual(all.map((c) => c.id));
    // 200 is a multiple of the clamped page: the third page is empty and has no `cases` key.
    expect(seen.map((q) => q.get('skip'))).toEqual(['0', '100', '200']);
  });

  it('an empty result without a cases key gives a CSV with only the header', async () => {
    nock(BASE).get(PATH).query(true).reply(200, envelope(undefined, 0));
    const run = await runCli(['cases', 'list', '--env', BASE, '--format', 'csv'], { env });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe(
      'writeId,caseId,caseStatus,severityLevel,policyName,dataSourceName,assignee,caseLabel\n',
    );
  });

  it('sends the filter as the JSON array with operator in, the sort as FIELD DESC and the fields', async () => {
    const seen: URLSearchParams[] = [];
    serveClamped(makeCases(3), 100, true, seen);
    const run = await runCli(
      [
        'cases',
        'list',
        '--env',
        BASE,
        '--status',
        'open,acknowledged',
        '--policy',
        'A\\, B',
        '--sort',
        'caseId:desc',
        '--fields',
        'caseId,caseLabel',
        '--format',
        'ndjson',
      ],
      { env },
    );
    expect(run.exitCode).toBe(0);
    const q = seen[0];
    expect(JSON.parse(String(q?.get('filter')))).toEqual([
      { field: 'caseStatus', value: ['open', 'acknowledged'], operator: 'in' },
      { field: 'policyName', value: ['A, B'], operator: 'in' },
    ]);
    expect(q?.get('sort')).toBe('caseId DESC');
    // The ids a case may carry are always asked for: the id a write takes must be known.
    expect(q?.get('fields')).toBe('caseId,caseLabel,_id,id');
    expect(Object.keys(JSON.parse(run.stdout.split('\n')[0] ?? '{}'))).toEqual(['caseId', 'caseLabel']);
  });

  it('leaves no -o file (and no temporary one) when a later page fails', async () => {
    const dir = await makeTempDir('cases-paging-');
    const out = join(dir, 'cases.csv');
    nock(BASE)
      .get(PATH)
      .query((q) => q.skip === '0')
      .reply(200, envelope(makeCases(100), 300));
    nock(BASE)
      .get(PATH)
      .query((q) => q.skip === '100')
      .reply(400, { error: 'Invalid skip' });
    const run = await runCli(['cases', 'list', '--env', BASE, '-o', out], { env });
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/^error: GET \/api\/v1\/actionable-insights\/all-cases -> 400: Invalid skip/);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe('cases list CSV quoting (golden: fixtures/cases/001-csv-quoting)', () => {
  it('quotes commas, quotes and newlines as RFC 4180 says, reading caseId ?? id', async () => {
    const folder = join(fixturesDir(), 'cases', '001-csv-quoting');
    const cases = JSON.parse(await readFile(join(folder, 'cases.json'), 'utf8')) as Record<string, unknown>[];
    const expected = await readFile(join(folder, 'expected.csv'), 'utf8');
    nock(BASE).get(PATH).query(true).reply(200, envelope(cases, cases.length));
    const run = await runCli(['cases', 'list', '--env', BASE, '--format', 'csv'], { env });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe(expected);
  });

  it('writes the same bytes to -o FILE', async () => {
    const folder = join(fixturesDir(), 'cases', '001-csv-quoting');
    const cases = JSON.parse(await readFile(join(folder, 'cases.json'), 'utf8')) as Record<string, unknown>[];
    nock(BASE).get(PATH).query(true).reply(200, envelope(cases, cases.length));
    const out = join(await makeTempDir('cases-csv-'), 'out.csv');
    const run = await runCli(['cases', 'list', '--env', BASE, '-o', out], { env });
    expect(run.exitCode).toBe(0);
    expect(await readFile(out, 'utf8')).toBe(await readFile(join(folder, 'expected.csv'), 'utf8'));
  });
});

describe('paging asks for the next page before the current one is consumed', () => {
  it('page 2 is requested while page 1 is handed out, and nothing past the total', async () => {
    const all = makeCases(5);
    const skips: string[] = [];
    let page2Asked: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => {
      page2Asked = resolve;
    });
    nock(BASE)
      .get(PATH)
      .query(true)
      .reply((uri) => {
        const q = new URL(uri, BASE).searchParams;
        const skip = Number(q.get('skip') ?? 0);
        skips.push(String(skip));
        if (skip === 2) page2Asked();
        return [200, envelope(all.slice(skip, skip + 2), all.length)];
      })
      .persist();
    const { client } = makeClient({ url: BASE });
    try {
      const items = listCases(client, { pageSize: 2 })[Symbol.asyncIterator]();
      const first = await items.next();
      expect(first.value?.caseId).toBe('case-0000');
      // Only the first item of page 1 has been taken: page 2 is asked for all the same (on the old
      // code this waits forever and the test times out).
      await asked;
      const rest: string[] = [];
      for (let r = await items.next(); !r.done; r = await items.next()) rest.push(r.value.caseId);
      expect(rest).toEqual(['case-0001', 'case-0002', 'case-0003', 'case-0004']);
      expect(skips).toEqual(['0', '2', '4']);
    } finally {
      client.close();
    }
  });

  it('asks two pages ahead while pages come full, and asks again when a guessed skip was wrong', async () => {
    // Pages of 100 up to case 100, then the service clamps to 60: the page guessed at skip 200 is
    // dropped, and the one at skip 160 is asked for.
    const all = makeCases(400);
    const seen: URLSearchParams[] = [];
    serveClamped(all, (skip) => (skip < 100 ? 100 : 60), true, seen);
    const { client } = makeClient({ url: BASE });
    try {
      const ids: string[] = [];
      for await (const c of listCases(client, { pageSize: 100 })) ids.push(c.caseId);
      const skips = seen.map((q) => Number(q.get('skip')));
      expect(ids).toEqual(all.map((c) => c.id));
      expect(skips.slice(0, 2)).toEqual([0, 100]);
      expect(skips).toContain(200);
      expect(skips).toContain(160);
      // Every case read once: the pages used are 0, 100, 160, 220, ... 340 (and nothing past the total).
      expect(skips.every((skip) => skip < all.length)).toBe(true);
    } finally {
      client.close();
    }
  });
});
