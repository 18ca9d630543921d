/**
 * Paging shared by the list endpoints (connections, cases): ask for `limit` items from `skip`, and
 * keep going until the service's `totalCount` is reached, or (without a total) until a page is
 * shorter than one already seen or empty. A service may clamp `limit` (ask 1000, get 100), so a page
 * shorter than asked proves nothing on its own. Also the helpers every endpoint's answer reader shares
 * (`isRecord`, `readCount`, `unexpectedShape`).
 */
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
  readonly pageSize: number;
  readonly signal?: AbortSignal;
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

/**
 * Every item of a paged list endpoint, page by page. The next page is asked for as soon as the current
 * one is read, before its items are handed out, so the service prepares page k+1 while the caller
 * processes page k (one request ahead at most; order unchanged; a failure of the next page surfaces
 * after the current page's items).
 */
export async function* pageThrough<T>(client: HttpClient, endpoint: PagedEndpoint<T>): AsyncGenerator<T> {
  const fetchPage = (skip: number): Promise<unknown> => {
    const request = client.request<unknown>({
      method: 'GET',
      path: endpoint.path,
      query: { ...endpoint.query, skip, limit: endpoint.pageSize, requireTotalCount: true },
      retry: 'safe',
      ...(endpoint.signal ? { signal: endpoint.signal } : {}),
    });
    // Observed when awaited; a caller that stops early leaves it unobserved (a read: harmless).
    request.catch(() => undefined);
    return request;
  };
  let skip = 0;
  let largestPage = 0;
  let previousFirstId: string | undefined;
  let next = fetchPage(skip);
  for (;;) {
    const page = endpoint.readPage(await next);
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
    largestPage = Math.max(largestPage, count);
    if (!last) next = fetchPage(skip);
    for (const item of page.items) yield item;
    if (last) return;
  }
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
