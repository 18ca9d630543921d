/**
 * Paging shared by the list endpoints (connections, cases): ask for `limit` items from `skip`, and
 * keep going until the service's `totalCount` is reached, or (without a total) until a page is
 * shorter than one already seen or empty. A service may clamp `limit` (ask 1000, get 100), so a page
 * shorter than asked proves nothing on its own. Also the helpers every endpoint's answer reader shares
 * (`isRecord`, `readCount`, `unexpectedShape`).
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { ApiError } from '../errors.js';
import type { HttpClient } from './http.js';

/** Default page size asked for; the service may clamp it. */
export const DEFAULT_PAGE_SIZE = 1000;

/** One page as read from an envelope. */
export interface Page<T> {
  readonly items: readonly T[];
  /** The service's total count of matching items, when it said one. */
  readonly totalCount: number | undefined;
}

/** How to read one list endpoint. */
export interface PagedEndpoint<T> {
  readonly path: string;
  readonly query: Readonly<Record<string, string | number | boolean | undefined>>;
  /** Read the items and the total out of a body; throws on an unexpected shape. */
  readonly readPage: (body: unknown) => Page<T>;
  /** Identity of an item, to detect a service that ignores `skip`. */
  readonly idOf: (item: T) => string | undefined;
}

/** Check a page size option once, at the boundary. */
export function checkPageSize(pageSize: number | undefined): number {
  const size = pageSize ?? DEFAULT_PAGE_SIZE;
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`Expected a page size >= 1, got ${size}`);
  return size;
}

/** Pages asked for ahead of the one being read (see {@link pagesThrough}). */
export const PAGES_AHEAD = 2;

/**
 * Every page of a paged list endpoint, never empty, in order. Up to {@link PAGES_AHEAD} pages are asked
 * for ahead of the one the caller processes, so the service prepares the next pages while the caller
 * works and while this process reads an answer. The next page's `skip` is known once the current page
 * is read; the one after it is guessed (the same count again, only while pages come full and the
 * service said its total) and asked for again from the right `skip` when the guess was wrong (a read:
 * asking twice is harmless). A failure of a page surfaces after the pages before it. Pages, not items:
 * an async generator costs a promise per value handed out (about 2 µs: 2 s of a million cases), more
 * than a caller's synchronous work on an item; `yield*` a page where items are wanted.
 */
export function pagesThrough<T>(
  client: HttpClient,
  endpoint: PagedEndpoint<T>,
  options: { readonly pageSize?: number | undefined; readonly signal?: AbortSignal | undefined } = {},
): AsyncGenerator<readonly T[]> {
  // The page size is checked now, not at the first page.
  return pageLoop(client, endpoint, checkPageSize(options.pageSize), options.signal);
}

async function* pageLoop<T>(
  client: HttpClient,
  endpoint: PagedEndpoint<T>,
  pageSize: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<readonly T[]> {
  const fetchPage = (skip: number): { readonly skip: number; readonly answer: Promise<unknown> } => {
    const answer = client.request<unknown>({
      method: 'GET',
      path: endpoint.path,
      query: { ...endpoint.query, skip, limit: pageSize, requireTotalCount: true },
      retry: 'safe',
      ...(signal ? { signal } : {}),
    });
    // Observed when awaited; one dropped (a wrong guess, a caller that stops early) stays unobserved.
    answer.catch(() => undefined);
    return { skip, answer };
  };
  let skip = 0;
  let largestPage = 0;
  let previousFirstId: string | undefined;
  let ahead = [fetchPage(skip)];
  for (;;) {
    const asked = ahead.shift() as { readonly skip: number; readonly answer: Promise<unknown> };
    const page = endpoint.readPage(await asked.answer);
    const count = page.items.length;
    if (count === 0) return;
    const first = page.items[0];
    const firstId = first === undefined ? undefined : endpoint.idOf(first);
    if (skip > 0 && firstId !== undefined && firstId === previousFirstId) {
      // Without this check a service that ignores `skip` would make the loop run forever.
      throw new ApiError(
        {
          method: 'GET',
          path: `/api/v1${endpoint.path}`,
          status: 200,
          serviceMessage: `the page at skip=${skip} starts with the same item as the previous page (the service seems to ignore skip)`,
        },
        { hint: 'This service does not page as expected; report it with --log-level debug output' },
      );
    }
    previousFirstId = firstId;
    skip += count;
    // Done after this page: the total is reached, or (no total) it is shorter than one already seen,
    // which makes it the clamped limit's last page.
    const last = page.totalCount !== undefined ? skip >= page.totalCount : count < largestPage;
    const full = count >= largestPage;
    largestPage = Math.max(largestPage, count);
    if (!last) {
      // A guess that missed (the page came shorter than the one before) is dropped and asked again.
      if (ahead[0]?.skip !== skip) ahead = [];
      if (ahead.length === 0) ahead.push(fetchPage(skip));
      const total = page.totalCount;
      // Each guess one page of this page's size after the last page asked for.
      while (total !== undefined && full && ahead.length < PAGES_AHEAD) {
        const next = (ahead.at(-1)?.skip ?? skip) + count;
        if (next >= total) break;
        ahead.push(fetchPage(next));
      }
      // The request is put on the wire by callbacks queued behind this one (the socket is handed over
      // on the next tick): let them run before the caller gets the page, or a caller that works on it
      // synchronously would hold the request back until it is done.
      await nextTurn();
    }
    yield page.items;
    if (last) return;
  }
}

/** The items of `pages`, one at a time (for a caller whose work per item is not synchronous). */
export async function* itemsOf<T>(pages: AsyncIterable<readonly T[]>): AsyncGenerator<T> {
  for await (const page of pages) yield* page;
}

/** A JSON object (not an array, not null): what every reader of an answer looks into. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The error for a body of an unexpected shape (a different API version, a proxy): reported as a 502. */
export function unexpectedShape(path: string, what: string): ApiError {
  return new ApiError(
    { method: 'GET', path: `/api/v1${path}`, status: 502, serviceMessage: `unexpected response: ${what}` },
    { hint: 'Check that the URL points at a Data Discovery Service API' },
  );
}

/** Read a non-negative integer count from a value (number or numeric string). */
export function readCount(value: unknown): number | undefined {
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
