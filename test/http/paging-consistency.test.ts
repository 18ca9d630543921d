/**
 * Paging against services that page by `skip` or by `offset` (api-notes [code]: BigID's SIEM connector
 * pages all-cases with `limit` + `offset`), by neither, and lists that change while they are read
 * (api-notes [seen]: list order and contents change over time). Every item once, or exit 5.
 */
import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { listCases } from '../../src/api/cases.js';
import { listConnections } from '../../src/api/connections.js';
import { InconsistentListError, LIST_READS } from '../../src/api/paging.js';
import { BASE, collect, makeClient, rejectionOf } from './client-fixture.js';

afterEach(() => {
  nock.cleanAll();
});

const LIST = '/api/v1/ds-connections';
const CASES = '/api/v1/actionable-insights/all-cases';

function makeConnections(n: number, from = 0): Record<string, unknown>[] {
  return Array.from({ length: n }, (_, i) => ({
    _id: (from + i).toString(16).padStart(24, '0'),
    name: `conn-${String(from + i).padStart(4, '0')}`,
    type: 's3',
  }));
}

/**
 * A service over the live list `items()` (read at each request) that honours `param` for the start
 * of a page; `beforeAnswer(n)` runs before the n-th request (1-based) is answered (another writer).
 */
function serve(
  path: string,
  wrap: (page: Record<string, unknown>[], total: number) => unknown,
  items: () => Record<string, unknown>[],
  param: 'skip' | 'offset' | 'none',
  beforeAnswer: (n: number) => void = () => undefined,
): URLSearchParams[] {
  const seen: URLSearchParams[] = [];
  nock(BASE)
    .persist()
    .get(path)
    .query(true)
    .reply((uri) => {
      const q = new URL(uri, BASE).searchParams;
      seen.push(q);
      beforeAnswer(seen.length);
      const start = param === 'none' ? 0 : Number(q.get(param) ?? 0);
      const limit = Number(q.get('limit') ?? 100);
      const all = items();
      return [200, wrap(all.slice(start, start + limit), all.length)];
    });
  return seen;
}

const connectionsEnvelope = (page: Record<string, unknown>[], total: number) => ({
  status: 'success',
  statusCode: 200,
  data: { ds_connections: page, totalCount: total },
  message: null,
});

const casesEnvelope = (page: Record<string, unknown>[], total: number) => ({
  status: 'success',
  statusCode: 200,
  data: { cases: page, totalCount: total },
  message: null,
});

const names = (list: readonly { name?: unknown }[]) => list.map((c) => String(c.name));

describe('paging by skip or by offset', () => {
  it('sends the start as both skip and offset, and a skip-only service gives every item once', async () => {
    const all = makeConnections(230);
    const seen = serve(LIST, connectionsEnvelope, () => all, 'skip');
    const { client } = makeClient();
    const got = await collect(listConnections(client, { pageSize: 50 }));
    expect(names(got)).toEqual(names(all));
    for (const q of seen) expect(q.get('offset')).toBe(q.get('skip'));
  });

  it('an offset-only service (cases, pages of 50) gives every case exactly once', async () => {
    const all = Array.from({ length: 250 }, (_, i) => ({
      _id: `c${i}`,
      caseId: `SPC-${i}`,
      caseStatus: 'open',
    }));
    serve(CASES, casesEnvelope, () => all, 'offset');
    const { client } = makeClient();
    const got = await collect(listCases(client, { pageSize: 50 }));
    expect(got.map((c) => c.caseId)).toEqual(all.map((c) => c.caseId));
    expect(new Set(got.map((c) => c._id)).size).toBe(250);
  });

  it('a service that honours neither is an InconsistentListError (exit 5) after two pages', async () => {
    const seen = serve(LIST, connectionsEnvelope, () => makeConnections(120), 'none');
    const { client } = makeClient();
    const error = (await rejectionOf(
      collect(listConnections(client, { pageSize: 50 })),
    )) as InconsistentListError;
    expect(error).toBeInstanceOf(InconsistentListError);
    expect(error.reason).toBe('paging-ignored');
    expect(error.exitCode).toBe(5);
    expect(error.toUserLine()).not.toContain('\n');
    // The first page, the second (which repeats it) and the guessed third at most.
    expect(seen.length).toBeLessThanOrEqual(3);
  });
});

describe('a list that changes while it is read', () => {
  it('a delete on an earlier page (totalCount changes) is read again: every item once, none missing', async () => {
    let live = makeConnections(10);
    const seen = serve(
      LIST,
      connectionsEnvelope,
      () => live,
      'skip',
      (n) => {
        if (n === 2) live = live.filter((c) => c.name !== 'conn-0001');
      },
    );
    const { client } = makeClient();
    const got = await collect(listConnections(client, { pageSize: 3 }));
    // conn-0001 was handed out before it was deleted; conn-0003 (shifted onto page 1) is not lost.
    expect(names(got)).toEqual(names(makeConnections(10)));
    expect(seen.filter((q) => q.get('skip') === '0')).toHaveLength(2);
  });

  it('a delete on an earlier page and a create after it (totalCount kept) between two pages: the second read hands out what the first missed', async () => {
    let live = makeConnections(10);
    const newcomer = { _id: 'e'.repeat(24), name: 'conn-zzzz', type: 's3' };
    const seen = serve(
      LIST,
      connectionsEnvelope,
      () => live,
      'skip',
      (n) => {
        if (n === 2) live = [...live.filter((c) => c.name !== 'conn-0001'), newcomer];
      },
    );
    const { client } = makeClient();
    const got = names(await collect(listConnections(client, { pageSize: 3 })));
    // conn-0001 handed out before it was deleted; conn-0003, shifted onto page 1, is not lost.
    expect(got.sort()).toEqual([...names(makeConnections(10)), 'conn-zzzz'].sort());
    expect(seen.filter((q) => q.get('skip') === '0')).toHaveLength(2);
  });

  it('an insert on an earlier page (an item seen again) is read again: the new item once, none twice', async () => {
    let live = makeConnections(10);
    serve(
      LIST,
      connectionsEnvelope,
      () => live,
      'skip',
      (n) => {
        // Same total: the insert is noticed by the item pushed from page 1 onto page 2.
        if (n === 2) live = [{ _id: 'f'.repeat(24), name: 'conn-0000a', type: 's3' }, ...live.slice(0, 9)];
      },
    );
    const { client } = makeClient();
    const got = names(await collect(listConnections(client, { pageSize: 3 })));
    expect(new Set(got).size).toBe(got.length);
    expect(got).toContain('conn-0000a');
  });

  it(`a list that changes on every read ends after ${LIST_READS} reads with exit 5 and one line`, async () => {
    let n = 0;
    const seen = serve(
      LIST,
      connectionsEnvelope,
      () => makeConnections(10 + n),
      'skip',
      () => {
        n += 1;
      },
    );
    const { client } = makeClient({ label: 'prod' });
    const error = (await rejectionOf(
      collect(listConnections(client, { pageSize: 4 })),
    )) as InconsistentListError;
    expect(error).toBeInstanceOf(InconsistentListError);
    expect(error.reason).toBe('changed');
    expect(error.toUserLine()).toMatch(
      /^prod changed while its connections were listed \(totalCount .*; read 3 times\)\. Re-run/,
    );
    expect(seen.filter((q) => q.get('skip') === '0')).toHaveLength(LIST_READS);
  });

  it('a list that ends short of its totalCount is never handed out as complete', async () => {
    const items = makeConnections(6);
    nock(BASE)
      .persist()
      .get(LIST)
      .query(true)
      .reply((uri) => {
        const skip = Number(new URL(uri, BASE).searchParams.get('skip'));
        return [200, connectionsEnvelope(items.slice(skip, skip + 3), 8)];
      });
    const { client } = makeClient();
    const error = (await rejectionOf(
      collect(listConnections(client, { pageSize: 3 })),
    )) as InconsistentListError;
    expect(error).toBeInstanceOf(InconsistentListError);
    expect(error.message).toContain('the list ended at 6 of the 8 it announced');
  });

  it('items without an id cannot be read again: a change stops at once', async () => {
    let total = 6;
    const items = () => Array.from({ length: total }, () => ({ type: 's3' }));
    serve(LIST, connectionsEnvelope, items, 'skip', (n) => {
      if (n === 2) total = 5;
    });
    const { client } = makeClient();
    const error = (await rejectionOf(
      collect(listConnections(client, { pageSize: 3 })),
    )) as InconsistentListError;
    expect(error).toBeInstanceOf(InconsistentListError);
    expect(error.message).toContain('read 1 time)');
  });

  it('cases are not read again (a million are listed in bounded memory): a change stops at once, exit 5', async () => {
    let n = 0;
    serve(
      CASES,
      casesEnvelope,
      () => Array.from({ length: 10 + n }, (_, i) => ({ _id: `c${i}`, caseStatus: 'open' })),
      'skip',
      () => {
        n += 1;
      },
    );
    const { client } = makeClient();
    const error = (await rejectionOf(collect(listCases(client, { pageSize: 4 })))) as InconsistentListError;
    expect(error).toBeInstanceOf(InconsistentListError);
    expect(error.message).toMatch(/changed while its cases were listed \(totalCount .*; read 1 time\)/);
  });
});
