/**
 * Paging of the list endpoints (connections, cases) and the helpers every answer reader shares. A page's
 * start is sent as both `skip` (spec) and `offset` (api-notes [code]: BigID's own SIEM connector pages
 * all-cases with `limit` + `offset`). A clamped `limit`, a list changing while read (api-notes: nothing pins
 * it): see docs/service.md, "Lists and paging". A caller never gets an item twice nor a silently short list.
 */

import { setImmediate as nextTurn } from 'node:timers/promises';
import { countOf } from '../display-name.js';
import { ApiError, DdsError, ExitCode } from '../errors.js';
import { isRecord } from '../own-property.js';
import type { HttpClient } from './http.js';

/** Default page size asked for; the service may clamp it. */
export const DEFAULT_PAGE_SIZE = 1000;

/** Reads of one list before a list that keeps changing is given up (exit 5). */
export const LIST_READS = 3;

/** Ids a listing remembers to read a changed list again; a longer list that changes ends with exit 5. */
export const REREAD_MEMORY_ITEMS = 200_000;

/** One page as read from an envelope. */
export interface Page<T> {
  readonly items: readonly T[];
  /** The service's total count of matching items, when it said one. */
  readonly totalCount: number | undefined;
}

export interface PagedEndpoint<T> {
  readonly path: string;
  /** What the list holds, plural, for messages (`connections`, `cases`). */
  readonly what: string;
  readonly query: Readonly<Record<string, string | number | boolean | undefined>>;
  /** Read the items and the total out of a body; throws on an unexpected shape. */
  readonly readPage: (body: unknown) => Page<T>;
  readonly idOf: (item: T) => string | undefined;
  /** Read a changed list again (default true); false: a change stops the listing at once (exit 5). */
  readonly readAgain?: boolean;
}

/** Why a list could not be read: it changed on every read, or the service pages with neither start. */
export type InconsistentListReason = 'changed' | 'paging-ignored';

/** A list that could not be read consistently (exit 5): a caller must never act on part of it. */
export class InconsistentListError extends DdsError {
  readonly code = 'E_LIST_INCONSISTENT';
  readonly exitCode = ExitCode.unavailable;
  readonly reason: InconsistentListReason;
  readonly path: string;

  constructor(reason: InconsistentListReason, message: string, path: string, hint: string) {
    super(message, { hint });
    this.reason = reason;
    this.path = path;
  }
}

/** Pages asked for ahead of the one being read (bench/README.md, "Why it stays"). */
export const PAGES_AHEAD = 2;

/** A change seen while reading a list once: the reader decides to read again. */
class ListChanged extends Error {
  constructor(
    readonly reason: InconsistentListReason,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/**
 * The pages of a list endpoint, never empty, in order, with {@link PAGES_AHEAD} asked ahead of the caller's;
 * the start of the one after next is guessed from this page's size (a wrong guess is asked again). Pages, not
 * items: a promise per item (~2 µs: 2 s for a million cases) outweighs a caller's synchronous work on it.
 */
export function pagesThrough<T>(
  client: HttpClient,
  endpoint: PagedEndpoint<T>,
  options: { readonly pageSize?: number | undefined; readonly signal?: AbortSignal | undefined } = {},
): AsyncGenerator<readonly T[]> {
  // Checked now, not at the first page.
  const pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(pageSize) || pageSize < 1)
    throw new RangeError(`Expected a page size >= 1, got ${pageSize}`);
  return readList(client, endpoint, pageSize, options.signal);
}

async function* readList<T>(
  client: HttpClient,
  endpoint: PagedEndpoint<T>,
  pageSize: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<readonly T[]> {
  // Ids handed out; undefined once they cannot all be remembered (a re-read then cannot tell).
  let handedOut: Set<string> | undefined = endpoint.readAgain === false ? undefined : new Set<string>();
  let handedAny = false;
  const remember = (page: readonly T[]): void => {
    handedAny = handedAny || page.length > 0;
    if (handedOut === undefined) return;
    for (const item of page) {
      const id = endpoint.idOf(item);
      if (id === undefined || handedOut.size >= REREAD_MEMORY_ITEMS) {
        handedOut = undefined;
        return;
      }
      handedOut.add(id);
    }
  };
  const label = client.environment.label;
  const path = `/api/v1${endpoint.path}`;
  // A list of more than one page is read twice: a delete on an earlier page and a create after it shift
  // the pages unseen (same total); the second read hands out what the first missed.
  for (let read = 1; ; read++) {
    const already = read === 1 ? undefined : handedOut;
    try {
      let pages = 0;
      for await (const page of readOnce(client, endpoint, pageSize, signal)) {
        pages += 1;
        const fresh =
          already === undefined ? page : page.filter((item) => !already.has(endpoint.idOf(item) ?? ''));
        remember(fresh);
        if (fresh.length > 0) yield fresh;
      }
      if (read > 1 || pages <= 1 || handedOut === undefined) return;
    } catch (error) {
      if (!(error instanceof ListChanged)) throw error;
      if (error.reason === 'paging-ignored') {
        throw new InconsistentListError(
          'paging-ignored',
          `${label} answers every page of ${path} with the same ${endpoint.what} (${error.detail}): it honours neither skip nor offset`,
          path,
          'This service does not page as expected; report it with --log-level debug output',
        );
      }
      const canReadAgain = read < LIST_READS && (handedOut !== undefined || !handedAny);
      if (!canReadAgain) {
        throw new InconsistentListError(
          'changed',
          `${label} changed while its ${endpoint.what} were listed (${error.detail}; read ${countOf(read, 'time')})`,
          path,
          'Re-run the command when the target is not being changed',
        );
      }
    }
  }
}

/** One read of the list from its start: pages in order; throws {@link ListChanged} on a change. */
async function* readOnce<T>(
  client: HttpClient,
  endpoint: PagedEndpoint<T>,
  pageSize: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<readonly T[]> {
  const fetchPage = (start: number): { readonly start: number; readonly answer: Promise<unknown> } => {
    const answer = client.request<unknown>({
      method: 'GET',
      path: endpoint.path,
      query: { ...endpoint.query, skip: start, offset: start, limit: pageSize, requireTotalCount: true },
      retry: 'safe',
      signal,
    });
    // Observed when awaited; one dropped (a wrong guess, a caller that stops early) stays unobserved.
    answer.catch(() => undefined);
    return { start, answer };
  };
  let start = 0;
  let largestPage = 0;
  let firstTotal: number | undefined;
  let previousIds: ReadonlySet<string> = new Set();
  let ahead = [fetchPage(start)];
  for (;;) {
    const asked = ahead.shift() as { readonly start: number; readonly answer: Promise<unknown> };
    const page = endpoint.readPage(await asked.answer);
    const count = page.items.length;
    if (start === 0) firstTotal = page.totalCount;
    else if (page.totalCount !== firstTotal)
      throw new ListChanged('changed', `totalCount ${String(firstTotal)} then ${String(page.totalCount)}`);
    if (count === 0) {
      if (firstTotal !== undefined && start < firstTotal)
        throw new ListChanged('changed', `the list ended at ${start} of the ${firstTotal} it announced`);
      return;
    }
    previousIds = checkAgainstPrevious(page.items, previousIds, endpoint.idOf, start);
    start += count;
    // Without a total, a page shorter than one already seen is the clamped limit's last page.
    const last = firstTotal !== undefined ? start >= firstTotal : count < largestPage;
    const full = count >= largestPage;
    largestPage = Math.max(largestPage, count);
    if (!last) {
      // A guess that missed (this page came short) is dropped and asked again.
      if (ahead[0]?.start !== start) ahead = [];
      if (ahead.length === 0) ahead.push(fetchPage(start));
      while (firstTotal !== undefined && full && ahead.length < PAGES_AHEAD) {
        const next = (ahead.at(-1)?.start ?? start) + count;
        if (next >= firstTotal) break;
        ahead.push(fetchPage(next));
      }
      // Let the queued callbacks put the requests on the wire, or a caller's synchronous work holds them back.
      await nextTurn();
    }
    yield page.items;
    if (last) return;
  }
}

/** A page's ids. All of the previous page again: the start was ignored; some: an insert shifted the list. */
function checkAgainstPrevious<T>(
  items: readonly T[],
  previous: ReadonlySet<string>,
  idOf: (item: T) => string | undefined,
  start: number,
): Set<string> {
  const ids = new Set<string>();
  let again = 0;
  let known = 0;
  for (const item of items) {
    const id = idOf(item);
    if (id === undefined) continue;
    ids.add(id);
    known += 1;
    if (previous.has(id)) again += 1;
  }
  if (again === 0) return ids;
  if (again === known && known === previous.size)
    throw new ListChanged('paging-ignored', `the page at ${start} repeats the previous one`);
  throw new ListChanged('changed', `${countOf(again, 'item')} of the previous page seen again at ${start}`);
}

/** The items of `pages`, one at a time (for a caller whose work per item is not synchronous). */
export async function* itemsOf<T>(pages: AsyncIterable<readonly T[]>): AsyncGenerator<T> {
  for await (const page of pages) yield* page;
}

/** The error for a body of an unexpected shape (a different API version, a proxy): reported as a 502. */
export function unexpectedShape(path: string, what: string): ApiError {
  return new ApiError(
    { method: 'GET', path: `/api/v1${path}`, status: 502, serviceMessage: `unexpected response: ${what}` },
    { hint: 'Check that the URL points at a Data Discovery Service API' },
  );
}

/**
 * The items of a list page: `data.<key>`, `data` as the array, `<key>` at the top, or the array at the top;
 * `totalCount` in `data` or at the top. A missing `data.<key>` reads as empty only when `omittable` or with a
 * zero total: another envelope must not pass as "nothing" (an empty export would look like success).
 */
export function readListPage(
  body: unknown,
  key: string,
  path: string,
  omittable: boolean,
): Page<Record<string, unknown>> {
  const data = isRecord(body) ? body.data : undefined;
  let items: unknown;
  if (isRecord(data) && (omittable || key in data)) items = data[key];
  else if (Array.isArray(data)) items = data;
  else if (isRecord(body) && Array.isArray(body[key])) items = body[key];
  else if (Array.isArray(body)) items = body;
  if (
    (items === null || items === undefined) &&
    isRecord(data) &&
    (omittable || readCount(data.totalCount) === 0)
  )
    items = [];
  if (!Array.isArray(items)) throw unexpectedShape(path, `no data.${key} array`);
  const totalCount =
    readCount(isRecord(data) ? data.totalCount : undefined) ??
    readCount(isRecord(body) ? body.totalCount : undefined);
  return { items: items.filter(isRecord), totalCount };
}

/** A non-negative integer count from a number or a numeric string. */
function readCount(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
  return undefined;
}

/** Encode a filter option: clauses become the JSON array; a string is sent as given. */
export function encodeFilter(filter: readonly unknown[] | string | undefined): string | undefined {
  if (filter === undefined) return undefined;
  if (typeof filter === 'string') return filter;
  return filter.length === 0 ? undefined : JSON.stringify(filter);
}
