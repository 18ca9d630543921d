/** Data source connections (spec 4.1, 4.7, 4.8). */

import type { Readable } from 'node:stream';
import type Parser from 'stream-json/Parser.js';
import StreamArray from 'stream-json/streamers/StreamArray.js';
import { detachString } from '../detach-string.js';
import { ApiError, isDdsError, UnaddressableNameError } from '../errors.js';
import { MAX_JSON_DEPTH, nestsTooDeep } from '../json-depth.js';
import type { Connection } from '../model/connection.js';
import { isRecord } from '../own-property.js';
import { scrubServiceText } from '../secrets.js';
import type { HttpClient, HttpRequest } from './http.js';
import { type Found, requestOrAbsent } from './http-options.js';
import { encodeFilter, itemsOf, type Page, pagesThrough, readListPage, unexpectedShape } from './paging.js';
import type { ConnectionKey, ListOptions } from './types.js';

const LIST_PATH = '/ds-connections';
const EXPORT_PATH = '/ds-connections/file-download/export';
const CREATE_PATH = '/ds_connections';

/** `data.ds_connections` (spec), `data` as the array (a verification step of the spec), or the top. */
function readConnectionsPage(body: unknown): Page<Connection> {
  const { items, totalCount } = readListPage(body, 'ds_connections', LIST_PATH, false);
  return { items: items as unknown as Connection[], totalCount };
}

/** Every connection, all pages. */
export function listConnections(client: HttpClient, options: ListOptions = {}): AsyncGenerator<Connection> {
  return itemsOf(listConnectionPages(client, options));
}

/** Every page of {@link listConnections}: for a caller whose work per connection is synchronous. */
export function listConnectionPages(
  client: HttpClient,
  options: ListOptions = {},
): AsyncGenerator<readonly Connection[]> {
  return pagesThrough(
    client,
    {
      path: LIST_PATH,
      what: 'connections',
      query: { sort: options.sort, filter: encodeFilter(options.filter) },
      readPage: readConnectionsPage,
      idOf: (c) => (typeof c._id === 'string' ? c._id : typeof c.name === 'string' ? c.name : undefined),
    },
    options,
  );
}

/** Every connection's `_id` and `name`; a name listed twice is kept twice (the caller decides). */
export async function listConnectionKeys(client: HttpClient, signal?: AbortSignal): Promise<ConnectionKey[]> {
  const keys: ConnectionKey[] = [];
  for await (const page of listConnectionPages(client, { signal })) {
    for (const c of page) keys.push({ _id: typeof c._id === 'string' ? c._id : undefined, name: c.name });
  }
  return keys;
}

/** Every connection's `_id` by name (a name listed twice: the last one's). */
export async function connectionIdsByName(
  client: HttpClient,
  signal?: AbortSignal,
): Promise<Map<string, string | undefined>> {
  return new Map((await listConnectionKeys(client, signal)).map((c) => [c.name, c._id]));
}

/** An export body torn or no JSON array: a 502 not retried mid-body; the caller may restart in its budget. */
export class BrokenExportError extends ApiError {}

/** The fields of an exported connection that callers keep beyond the connection. */
const IDENTITY_KEYS = ['name', 'type', '_id'] as const;

/** The file-download export, parsed as a stream (memory stays flat). `ids` restricts it. */
export async function* exportConnections(
  client: HttpClient,
  options: {
    readonly ids?: readonly string[];
    readonly signal?: AbortSignal;
  } = {},
): AsyncIterable<Connection> {
  const ids = options.ids && options.ids.length > 0 ? options.ids.join(',') : undefined;
  const body = (await client.requestStream({
    method: 'GET',
    path: EXPORT_PATH,
    query: { ids },
    retry: 'safe',
    signal: options.signal,
  })) as Readable;
  // One JSON array (spec 4.7), values whole only (`streamValues: false`), not also as chunks nobody reads:
  // 100 000 connections in 3.1-3.3 s, not 5.3-7.3 s (bench/README.md). withParser passes them on (untyped).
  const parserOptions: Parser.ParserOptions = { streamValues: false };
  const pipeline = StreamArray.withParser(parserOptions);
  body.on('error', (error) => pipeline.destroy(error));
  body.pipe(pipeline);
  try {
    for await (const item of pipeline as AsyncIterable<{ key: number; value: unknown }>) {
      if (!isRecord(item.value)) {
        throw unexpectedShape(EXPORT_PATH, `element ${item.key} of the export is not an object`);
      }
      if (nestsTooDeep(item.value)) {
        throw unexpectedShape(
          EXPORT_PATH,
          `element ${item.key} of the export is nested more than ${MAX_JSON_DEPTH} levels deep`,
        );
      }
      // Detached from the parser's chunk: kept as they are, 100 000 names kept the whole body alive.
      const entry = item.value as Record<string, unknown>;
      for (const key of IDENTITY_KEYS) {
        const value = entry[key];
        if (typeof value === 'string') entry[key] = detachString(value);
      }
      yield entry as unknown as Connection;
    }
  } catch (error) {
    if (isDdsError(error)) throw error;
    const detail = error instanceof Error ? error.message : String(error);
    throw new BrokenExportError(
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

/** True when a name can be looked up (not empty, `.` or `..`: URLs normalise those); no other is written. */
export function isAddressableName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..';
}

function checkAddressable(method: string, path: string, name: string): void {
  if (!isAddressableName(name)) throw new UnaddressableNameError(method, `/api/v1${path}`, name);
}

/** POST /ds_connections `{ds_connection}`; never retried here (the caller decides). */
export async function createConnection(
  client: HttpClient,
  connection: Record<string, unknown>,
  options: { readonly signal?: AbortSignal; readonly timeoutMs?: number } = {},
): Promise<ConnectionKey> {
  if (typeof connection.name === 'string') checkAddressable('POST', CREATE_PATH, connection.name);
  const body = await client.request<unknown>({
    method: 'POST',
    path: CREATE_PATH,
    body: { ds_connection: connection },
    retry: 'never',
    signal: options.signal,
    timeoutMs: options.timeoutMs,
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
 * A request to `/ds_connections/{name}`; `absent` when no connection has that name: real deployments
 * answer 400 "Unable to locate ..." instead of 404 (api-notes), the one message read to classify.
 */
function sendByName(
  client: HttpClient,
  name: string,
  request: Omit<HttpRequest, 'path'>,
): Promise<Found<unknown>> {
  const path = `${CREATE_PATH}/${encodeURIComponent(name)}`;
  checkAddressable(request.method, path, name);
  return requestOrAbsent(
    client,
    { ...request, path },
    (error) =>
      error.status === 404 ||
      (error.status === 400 && /unable to locate/i.test(error.http.serviceMessage ?? '')),
  );
}

/** GET /ds_connections/{name}; undefined when there is none. */
export async function getConnectionByName(
  client: HttpClient,
  name: string,
  options: { readonly signal?: AbortSignal } = {},
): Promise<Connection | undefined> {
  const answer = await sendByName(client, name, { method: 'GET', retry: 'safe', signal: options.signal });
  return answer.kind === 'absent' ? undefined : readOneConnection(answer.value, name);
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

/** PUT /ds_connections/{name} (api-notes [code]: whole object), retried; `value`: the answer's connection. */
export async function updateConnection(
  client: HttpClient,
  name: string,
  connection: Record<string, unknown>,
): Promise<Found<Connection | undefined>> {
  const answer = await sendByName(client, name, {
    method: 'PUT',
    body: { ds_connection: connection },
    retry: 'safe',
  });
  if (answer.kind === 'absent') return answer;
  try {
    return {
      kind: 'done',
      value: readOneConnection(answer.value, typeof connection.name === 'string' ? connection.name : name),
    };
  } catch {
    // An answer without the object (e.g. `{"status":"success"}`) still says it was updated.
    return { kind: 'done', value: undefined };
  }
}

/**
 * DELETE /ds_connections/{name} (api-notes [code]), retried (idempotent): after a retry, `absent` may
 * mean an earlier attempt deleted it. An {@link UnavailableError}: unknown outcome, the caller looks up.
 */
export async function deleteConnection(client: HttpClient, name: string): Promise<Found<undefined>> {
  const answer = await sendByName(client, name, { method: 'DELETE', retry: 'safe' });
  return answer.kind === 'absent' ? answer : { kind: 'done', value: undefined };
}

/** What a connection test said. `unknown`: an answer of no known shape (never guessed either way). */
export type ConnectionTestOutcome =
  | { readonly kind: 'succeeded'; readonly message: string | undefined }
  | { readonly kind: 'failed'; readonly message: string | undefined }
  | { readonly kind: 'unknown'; readonly message: string | undefined };

const TEST_PATH = '/ds-connection-test';

/**
 * POST /ds-connection-test `{ds_connection, isNewPassword: false}` (api-notes [docs]: the stored secret
 * is used). Retried: a test creates nothing. `success: false` on a 2xx is `failed`, not an error.
 */
export async function testConnection(
  client: HttpClient,
  connection: Record<string, unknown>,
  options: { readonly signal?: AbortSignal } = {},
): Promise<ConnectionTestOutcome> {
  let body: unknown;
  try {
    body = await client.request<unknown>({
      method: 'POST',
      path: TEST_PATH,
      body: { ds_connection: connection, isNewPassword: false },
      retry: 'safe',
      signal: options.signal,
    });
  } catch (error) {
    // The client reads `success:false` on a 2xx as an error envelope: here it is the test's answer.
    if (
      error instanceof ApiError &&
      error.status !== undefined &&
      error.status >= 200 &&
      error.status < 300
    ) {
      return { kind: 'failed', message: error.http.serviceMessage };
    }
    throw error;
  }
  return readTestOutcome(body);
}

/** A test's answer: `operationStatus: "SUCCESS"|"FAILED"` or `success`, at the top or in `data`. */
export function readTestOutcome(body: unknown): ConnectionTestOutcome {
  const top = isRecord(body) ? body : {};
  const data = isRecord(top.data) ? top.data : undefined;
  for (const record of [top, data]) {
    if (!record) continue;
    const text = [record.message, record.errorMessage, record.error].find(
      (v): v is string => typeof v === 'string' && v !== '',
    );
    const message = text === undefined ? undefined : scrubServiceText(text);
    const status =
      typeof record.operationStatus === 'string' ? record.operationStatus.toUpperCase() : undefined;
    if (status === 'SUCCESS') return { kind: 'succeeded', message };
    if (status === 'FAILED' || status === 'FAILURE') return { kind: 'failed', message };
    if (record.success === true) return { kind: 'succeeded', message };
    if (record.success === false) return { kind: 'failed', message };
  }
  return { kind: 'unknown', message: 'the answer carries neither operationStatus nor success' };
}
