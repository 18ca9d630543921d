/** Data source connections (spec 4.1, 4.7, 4.8). */
import type { Readable } from 'node:stream';
import StreamArray from 'stream-json/streamers/StreamArray.js';
import { ApiError, isDdsError } from '../errors.js';
import type { Connection } from '../model/connection.js';
import type { HttpClient } from './http.js';
import {
  checkPageSize,
  encodeFilter,
  isRecord,
  type Page,
  pageThrough,
  readCount,
  unexpectedShape,
} from './paging.js';
import type { CreatedConnection, ListOptions } from './types.js';

const LIST_PATH = '/ds-connections';
const EXPORT_PATH = '/ds-connections/file-download/export';
const CREATE_PATH = '/ds_connections';

/**
 * Read a connections page: `data.ds_connections` (the spec), or `data` as the array itself (the spec
 * says a verification step counts the elements of `data`), or the array at the top. `totalCount` is
 * looked for in `data` and at the top.
 */
export function readConnectionsPage(body: unknown): Page<Connection> {
  const data = isRecord(body) ? body.data : undefined;
  let items: unknown;
  if (isRecord(data) && 'ds_connections' in data) items = data.ds_connections;
  else if (Array.isArray(data)) items = data;
  else if (isRecord(body) && Array.isArray(body.ds_connections)) items = body.ds_connections;
  else if (Array.isArray(body)) items = body;
  // An empty result may leave the array out, but only a zero total says so: an envelope of another
  // shape must not read as "no connections" (an export of nothing would look like success).
  if ((items === null || items === undefined) && isRecord(data) && readCount(data.totalCount) === 0)
    items = [];
  if (!Array.isArray(items)) throw unexpectedShape(LIST_PATH, 'no data.ds_connections array');
  const totalCount =
    readCount(isRecord(data) ? data.totalCount : undefined) ??
    readCount(isRecord(body) ? body.totalCount : undefined);
  return { items: items.filter(isRecord) as unknown as Connection[], totalCount };
}

/** Every connection, all pages: pages with `skip` until `totalCount` or a short page, whatever `limit` the service clamps to. */
export function listConnections(client: HttpClient, options: ListOptions = {}): AsyncIterable<Connection> {
  return pageThrough(client, {
    path: LIST_PATH,
    query: { sort: options.sort, filter: encodeFilter(options.filter) },
    pageSize: checkPageSize(options.pageSize),
    ...(options.signal ? { signal: options.signal } : {}),
    readPage: readConnectionsPage,
    idOf: (c) => (typeof c._id === 'string' ? c._id : typeof c.name === 'string' ? c.name : undefined),
  });
}

/** The file-download export, parsed as a stream (memory stays flat). `ids` restricts it. */
export async function* exportConnections(
  client: HttpClient,
  options: { readonly ids?: readonly string[]; readonly signal?: AbortSignal } = {},
): AsyncIterable<Connection> {
  const ids = options.ids && options.ids.length > 0 ? options.ids.join(',') : undefined;
  const body = (await client.requestStream({
    method: 'GET',
    path: EXPORT_PATH,
    query: { ids },
    retry: 'safe',
    ...(options.signal ? { signal: options.signal } : {}),
  })) as Readable;
  // The export is one JSON array (spec 4.7), parsed token by token so memory stays flat. A body that
  // is not an array (an HTML page was already refused by the client) fails in the parser.
  const pipeline = StreamArray.withParser();
  body.on('error', (error) => pipeline.destroy(error));
  body.pipe(pipeline);
  try {
    for await (const item of pipeline as AsyncIterable<{ key: number; value: unknown }>) {
      if (!isRecord(item.value)) {
        throw unexpectedShape(EXPORT_PATH, `element ${item.key} of the export is not an object`);
      }
      yield item.value as unknown as Connection;
    }
  } catch (error) {
    if (isDdsError(error)) throw error;
    // stream-json's messages say what went wrong in the text; a torn or non-array body is a bad gateway.
    const detail = error instanceof Error ? error.message : String(error);
    throw new ApiError(
      {
        method: 'GET',
        path: `/api/v1${EXPORT_PATH}`,
        status: 502,
        serviceMessage: `the export is not a JSON array (${detail})`,
      },
      { hint: 'Re-run the export; if it persists, check the service' },
    );
  } finally {
    pipeline.destroy();
  }
}

/** POST /ds_connections `{ds_connection}`. Never retried here: the importer decides. */
export async function createConnection(
  client: HttpClient,
  connection: Record<string, unknown>,
  options: { readonly signal?: AbortSignal; readonly timeoutMs?: number } = {},
): Promise<CreatedConnection> {
  const body = await client.request<unknown>({
    method: 'POST',
    path: CREATE_PATH,
    body: { ds_connection: connection },
    retry: 'never',
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  const fallbackName = typeof connection.name === 'string' ? connection.name : '';
  const top = isRecord(body) ? body : {};
  const data = isRecord(top.data) ? top.data : isRecord(top.ds_connection) ? top.ds_connection : undefined;
  const source = data ?? top;
  const name =
    typeof source.name === 'string' ? source.name : typeof top.name === 'string' ? top.name : fallbackName;
  const id = [source._id, top._id, source.id].find((v): v is string => typeof v === 'string' && v !== '');
  return { name, _id: id };
}

/**
 * True when a 400 answer to a look-up by name means "no such connection". Real deployments answer
 * 400 with "Unable to locate ..." instead of 404 (api-notes): this is the one place that reads a
 * service message to classify, and it is sanctioned by that note.
 */
export function isUnableToLocate(error: ApiError): boolean {
  return error.status === 400 && /unable to locate/i.test(error.http.serviceMessage ?? '');
}

/** GET /ds_connections/{name}; undefined when the service answers 400 "Unable to locate" (or 404). */
export async function getConnectionByName(
  client: HttpClient,
  name: string,
  options: { readonly signal?: AbortSignal } = {},
): Promise<Connection | undefined> {
  let body: unknown;
  try {
    body = await client.request<unknown>({
      method: 'GET',
      path: `${CREATE_PATH}/${encodeURIComponent(name)}`,
      retry: 'safe',
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    if (error instanceof ApiError && (error.status === 404 || isUnableToLocate(error))) return undefined;
    throw error;
  }
  return readOneConnection(body, name);
}

/** The connection inside a by-name answer: `data.ds_connection`, `data`, `ds_connection`, or the body. */
function readOneConnection(body: unknown, name: string): Connection | undefined {
  if (!isRecord(body)) return undefined;
  const data = body.data;
  const candidates: unknown[] = [];
  if (isRecord(data)) candidates.push(data.ds_connection, data.ds_connections, data);
  else if (Array.isArray(data)) candidates.push(data);
  candidates.push(body.ds_connection, body);
  for (const c of candidates) {
    if (Array.isArray(c)) {
      const found = c.find((x) => isRecord(x) && x.name === name);
      if (found) return found as Connection;
      if (c.length === 0) return undefined;
    } else if (isRecord(c) && typeof c.name === 'string') {
      return c as unknown as Connection;
    }
  }
  throw unexpectedShape(`${CREATE_PATH}/${encodeURIComponent(name)}`, 'no connection object in the answer');
}
