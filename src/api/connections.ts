/** Data source connections (spec 4.1, 4.7, 4.8). STUB: signatures fixed, bodies being written (issue #2). */
import type { HttpClient } from './http.js';
import type { Connection, CreatedConnection, ListOptions } from './types.js';

/** Every connection, all pages: pages with `skip` until `totalCount` or a short page, whatever `limit` the service clamps to. */
export declare function listConnections(client: HttpClient, options?: ListOptions): AsyncIterable<Connection>;

/** The file-download export, parsed as a stream (memory stays flat). `ids` restricts it. */
export declare function exportConnections(
  client: HttpClient,
  options?: { readonly ids?: readonly string[]; readonly signal?: AbortSignal },
): AsyncIterable<Connection>;

/** POST /ds_connections `{ds_connection}`. Never retried here: the importer decides. */
export declare function createConnection(
  client: HttpClient,
  connection: Record<string, unknown>,
  options?: { readonly signal?: AbortSignal; readonly timeoutMs?: number },
): Promise<CreatedConnection>;

/** GET /ds_connections/{name}; undefined when the service answers 400 "Unable to locate" (or 404). */
export declare function getConnectionByName(
  client: HttpClient,
  name: string,
  options?: { readonly signal?: AbortSignal },
): Promise<Connection | undefined>;
