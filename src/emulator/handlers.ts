/**
 * The service's endpoints, as plain functions from a parsed request to a {@link Reply}: the routes, and
 * the connection endpoints (scan profiles: `profile-handlers.ts`, cases: `case-handlers.ts`). Auth,
 * faults, latency, rate limiting and the socket live in `server.ts`; these files are the service's
 * behaviour.
 */
import { listCases, updateCaseStatus, updateCases } from './case-handlers.js';
import { newObjectId } from './ids.js';
import { findMaskedValues, maskConnection, secretKeysOf } from './masking.js';
import { createProfile, deleteProfile, getProfile, listProfiles, updateProfile } from './profile-handlers.js';
import { matchesFilter, parseFilter, parsePaging, parseSort, QueryError, sortItems } from './query.js';
import {
  badRequest,
  envelope,
  type HandlerDeps,
  isObject,
  notFound,
  ok,
  type Reply,
  type RequestContext,
} from './reply.js';
import { CONNECTION_NAME_PATTERN, getTemplate } from './templates.js';
import type { ConnectionRecord } from './types.js';

export { CASE_STATUSES } from './case-handlers.js';
export {
  badRequest,
  envelope,
  type HandlerDeps,
  internalError,
  notFound,
  type Reply,
  type RequestContext,
} from './reply.js';

/**
 * Fields a client may not set on a connection: the service manages them (api-notes, by exact name;
 * no prefix rule: `scan_scope` is a googledrive setting). The emulator's own reading of api-notes.
 */
const SERVER_MANAGED = new Set([
  '_id',
  'id',
  'created_at',
  'updated_at',
  'last_scan_at',
  'last_sub_scan_id',
  'connectionStatusTest',
  'connectionStatusScan',
  'connectionStatusDeleteFindings',
  'test_is_success',
  'test_timestamp',
  'scan_is_success',
  'scan_num_of_objects',
  'scan_timestamp',
  'deletion_is_success',
  'deletion_timestamp',
  'updatedPasswords',
]);

function isServerManaged(key: string): boolean {
  return SERVER_MANAGED.has(key);
}

const nameRegex = new RegExp(CONNECTION_NAME_PATTERN);

/** Route a request below `/api/v1`. Throws only on bugs (answered 500 by the server). */
export function handle(ctx: RequestContext, deps: HandlerDeps): Reply {
  try {
    return route(ctx, deps);
  } catch (err) {
    if (err instanceof QueryError) return badRequest(err.message);
    throw err;
  }
}

function route(ctx: RequestContext, deps: HandlerDeps): Reply {
  const [a, b, c] = ctx.segments;
  const n = ctx.segments.length;
  const m = ctx.method;
  if (m === 'GET' && a === 'ds-connections' && n === 1) return listConnections(ctx, deps);
  if (m === 'GET' && a === 'ds-connections' && b === 'file-download' && c === 'export' && n === 3) {
    return exportConnections(ctx, deps);
  }
  if (m === 'POST' && a === 'ds_connections' && n === 1) return createConnection(ctx, deps);
  if (m === 'GET' && a === 'ds_connections' && b !== undefined && n === 2) return getConnection(b, deps);
  if (m === 'PUT' && a === 'ds_connections' && b !== undefined && n === 2)
    return updateConnection(b, ctx, deps);
  if (m === 'DELETE' && a === 'ds_connections' && b !== undefined && n === 2)
    return deleteConnection(b, deps);
  if (m === 'POST' && a === 'ds-connection-test' && n === 1) return testConnection(ctx, deps);
  if (m === 'GET' && (a === 'scanner-status' || a === 'credentials') && n === 1) {
    if (!deps.settings.referencesApi) return notFound(`No route for ${m} /api/v1/${a}`);
    return a === 'scanner-status' ? listScanners(deps) : listCredentials(deps);
  }
  if (m === 'GET' && a === 'ds-connections-types' && b === 'template' && c !== undefined && n === 3) {
    return getConnectorTemplate(c);
  }
  if (m === 'GET' && a === 'scanProfiles' && n === 1) return listProfiles(deps);
  if (m === 'POST' && a === 'scanProfiles' && n === 1) return createProfile(ctx, deps);
  if (m === 'GET' && a === 'scanProfiles' && b !== undefined && n === 2) return getProfile(b, deps);
  if (m === 'PUT' && a === 'scanProfiles' && b !== undefined && n === 2) return updateProfile(b, ctx, deps);
  if (m === 'DELETE' && a === 'scanProfiles' && b !== undefined && n === 2) return deleteProfile(b, deps);
  if (a === 'actionable-insights') {
    if (m === 'GET' && b === 'all-cases' && n === 2) return listCases(ctx, deps);
    if (m === 'PATCH' && b?.startsWith('cases:') && n === 2)
      return updateCases(b.slice('cases:'.length), ctx, deps);
    if (m === 'PATCH' && b === 'case-status' && c !== undefined && n === 3)
      return updateCaseStatus(c, ctx, deps);
  }
  return notFound(`No route for ${m} /api/v1/${ctx.segments.join('/')}`);
}

/** `GET /api/v1/refresh-access-token`: no API token needed, the user token is the credential. */
export function refreshAccessToken(ctx: RequestContext, deps: HandlerDeps): Reply {
  if (ctx.credential === undefined || ctx.credential !== deps.settings.userToken) {
    // Real deployments answer 200 here; the client must read `success`.
    return ok({ success: false, message: 'Invalid or expired user token' });
  }
  return ok({ success: true, systemToken: deps.sessions.issue() });
}

// ---- connections -------------------------------------------------------------------------------

function listConnections(ctx: RequestContext, deps: HandlerDeps): Reply {
  const { skip, limit } = parsePaging(
    ctx.params,
    deps.settings.defaultPageSize,
    deps.settings.maxPageSize,
    deps.settings.paging,
  );
  const filter = parseFilter(ctx.params.get('filter'));
  const sort = parseSort(ctx.params.get('sort'));
  let page: ConnectionRecord[];
  let totalCount: number;
  if (sort.length === 0) {
    // Creation order without copying: 100k connections paged 1000 at a time stay cheap.
    page = [];
    totalCount = 0;
    for (const conn of deps.store.connectionValues()) {
      if (filter.length > 0 && !matchesFilter(conn, filter)) continue;
      if (totalCount >= skip && page.length < limit) page.push(conn);
      totalCount++;
    }
  } else {
    const matched =
      filter.length === 0
        ? deps.store.connections
        : deps.store.connections.filter((c) => matchesFilter(c, filter));
    const sorted = sortItems(matched, sort);
    totalCount = sorted.length;
    page = sorted.slice(skip, skip + limit);
  }
  // totalCount is sent whether or not requireTotalCount asked for it, as real deployments do.
  return ok(envelope({ ds_connections: page.map(maskConnection), totalCount }));
}

function parseIds(params: URLSearchParams): Set<string> | null {
  const all = params.getAll('ids');
  if (all.length === 0) return null;
  const ids = new Set<string>();
  for (const raw of all) {
    const t = raw.trim();
    if (t.startsWith('[')) {
      try {
        const parsed: unknown = JSON.parse(t);
        if (Array.isArray(parsed)) {
          for (const p of parsed) ids.add(String(p));
          continue;
        }
      } catch {
        // not JSON: read as a comma list
      }
    }
    for (const part of t.split(',')) if (part.trim() !== '') ids.add(part.trim());
  }
  return ids;
}

function exportConnections(ctx: RequestContext, deps: HandlerDeps): Reply {
  const ids = parseIds(ctx.params);
  const store = deps.store;
  const clear = deps.settings.exportClearSecrets;
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  return {
    status: 200,
    headers: { 'content-disposition': `attachment; filename="ds-connections-export-${stamp}.json"` },
    // Written element by element: 100k connections never become one string.
    *stream() {
      yield '[';
      let first = true;
      for (const conn of store.connectionValues()) {
        // `ids` names data sources by _id; the name (which real deployments also use as id) works too.
        if (ids !== null && !ids.has(conn._id) && !ids.has(conn.name)) continue;
        yield (first ? '\n' : ',\n') + JSON.stringify(clear ? conn : maskConnection(conn));
        first = false;
      }
      yield first ? ']\n' : '\n]\n';
    },
  };
}

function getConnection(name: string, deps: HandlerDeps): Reply {
  const conn = deps.store.getConnection(name);
  if (conn === undefined) return unableToLocate(name);
  const masked = maskConnection(conn);
  return ok(envelope({ ds_connection: masked }, { ds_connection: masked }));
}

function isEmpty(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === 'string' && v.trim() === '');
}

/** The problem with a connection's values (masked secrets, its template's rules), or null. */
function checkConnectionInput(name: string, type: string, input: Record<string, unknown>): string | null {
  const masked = findMaskedValues(input);
  if (masked.length > 0) {
    return `Data source ${name}: ${masked.join(', ')} holds the masked value "******", not a real value`;
  }
  const template = getTemplate(type);
  if (template === undefined) return null;
  const missing = template.fields
    .filter((f) => f.mandatory && isEmpty(input[f.apiName]))
    .map((f) => f.apiName);
  if (missing.length > 0) {
    return `Data source ${name}: missing mandatory field(s) of type ${type}: ${missing.join(', ')}`;
  }
  for (const f of template.fields) {
    const v = input[f.apiName];
    if (typeof v !== 'string' || v === '' || f.apiName === 'name') continue;
    for (const rule of f.validation ?? []) {
      if (!new RegExp(rule.regex).test(v)) return `Data source ${name}: ${f.apiName}: ${rule.errorText}`;
    }
  }
  return null;
}

/** The `ds_connection` object of a body, or null. */
function readConnectionBody(body: unknown): Record<string, unknown> | null {
  return isObject(body) && isObject(body.ds_connection) ? body.ds_connection : null;
}

const NOT_A_CONNECTION_BODY = 'Request body must be an object {"ds_connection": {...}}';

function unableToLocate(name: string): Reply {
  // Real deployments answer 400 (not 404) for an unknown name (api-notes).
  return badRequest(`Unable to locate data source ${name}`);
}

function createConnection(ctx: RequestContext, deps: HandlerDeps): Reply {
  const input = readConnectionBody(ctx.body);
  if (input === null) return badRequest(NOT_A_CONNECTION_BODY);
  const name = input.name;
  if (typeof name !== 'string' || name.trim() === '') return badRequest('Data source name is required');
  if (!nameRegex.test(name)) {
    return badRequest(`Invalid data source name '${name}': use letters, digits, spaces, _ - ( ) : only`);
  }
  const type = input.type;
  if (typeof type !== 'string' || type.trim() === '')
    return badRequest(`Data source type is required for '${name}'`);
  if (deps.store.getConnection(name) !== undefined) return badRequest(`Data source ${name} already exists`);
  const problem = checkConnectionInput(name, type, input);
  if (problem !== null) return badRequest(problem);
  const clean: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) if (!isServerManaged(k)) clean[k] = v;
  const now = new Date().toISOString();
  const _id = newObjectId();
  const record = {
    ...clean,
    _id,
    // Real deployments use the name as `id` (api-notes).
    id: name,
    name,
    type,
    created_at: now,
    updated_at: now,
    connectionStatusTest: { is_success: false, last_connection: null },
    connectionStatusScan: { is_success: false, last_connection: null },
  } as ConnectionRecord;
  deps.store.putConnection(record);
  deps.record.addCreate({ kind: 'connection', name, id: _id, at: Date.now() });
  // Both the envelope and top-level keys: tutorial clients read `name` at the top.
  return ok(envelope({ _id, name }, { _id, name }), true);
}

/**
 * `PUT ds_connections/{name}` ([code] route; the rest [guess]): the body replaces the configuration.
 * Server-managed fields of the body are ignored and the stored ones kept (`updated_at` renewed); a
 * secret key absent from the body keeps its stored value; `"******"` anywhere is refused. A body
 * without `name` or `type` keeps the stored ones. Renaming (another `name` in the body) is refused
 * with 400: nothing public shows a rename through PUT, and a client must never do one by accident.
 */
function updateConnection(pathName: string, ctx: RequestContext, deps: HandlerDeps): Reply {
  const stored = deps.store.getConnection(pathName);
  if (stored === undefined) return unableToLocate(pathName);
  const input = readConnectionBody(ctx.body);
  if (input === null) return badRequest(NOT_A_CONNECTION_BODY);
  const name = input.name ?? pathName;
  if (name !== pathName) {
    return badRequest(
      `Data source ${pathName}: renaming through an update is not supported (body name ${JSON.stringify(name)})`,
    );
  }
  const type = input.type ?? stored.type;
  if (typeof type !== 'string' || type.trim() === '')
    return badRequest(`Data source type is required for '${pathName}'`);
  const clean: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(input)) if (!isServerManaged(k)) clean[k] = v;
  clean.name = pathName;
  clean.type = type;
  for (const key of secretKeysOf(type)) {
    if (!(key in clean) && key in stored) clean[key] = stored[key];
  }
  const problem = checkConnectionInput(pathName, type, clean);
  if (problem !== null) return badRequest(problem);
  const managed: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(stored)) if (isServerManaged(k)) managed[k] = v;
  const record = {
    ...clean,
    ...managed,
    _id: stored._id,
    id: stored.id ?? pathName,
    name: pathName,
    type,
    updated_at: new Date().toISOString(),
  } as ConnectionRecord;
  deps.store.replaceConnection(pathName, record);
  deps.record.addChange({ op: 'update', kind: 'connection', name: pathName, id: stored._id, at: Date.now() });
  const masked = maskConnection(record);
  return ok(envelope({ ds_connection: masked }, { ds_connection: masked }), true);
}

/** `DELETE ds_connections/{name}` ([code]): 200 with the envelope `{data: {_id, name}}` ([guess] shape). */
function deleteConnection(name: string, deps: HandlerDeps): Reply {
  const stored = deps.store.getConnection(name);
  if (stored === undefined) return unableToLocate(name);
  deps.store.deleteConnection(name);
  deps.record.addChange({ op: 'delete', kind: 'connection', name, id: stored._id, at: Date.now() });
  return ok(envelope({ _id: stored._id, name }), true);
}

/**
 * `POST ds-connection-test` ([docs] route and body; the answer is a [guess]). Tests the stored connection
 * named in the body. `isNewPassword: true` means the body's secrets are to be used: they must then not be
 * `"******"`; otherwise the stored secrets are used. The outcome is the emulator's setting (names in
 * `testFailures` / `connectionTestFailures` fail, others succeed), stored on the connection as
 * `connectionStatusTest: {is_success, last_connection}`.
 */
function testConnection(ctx: RequestContext, deps: HandlerDeps): Reply {
  const input = readConnectionBody(ctx.body);
  if (input === null) return badRequest(NOT_A_CONNECTION_BODY);
  const name = input.name;
  if (typeof name !== 'string' || name.trim() === '') return badRequest('Data source name is required');
  const stored = deps.store.getConnection(name);
  if (stored === undefined) return unableToLocate(name);
  const isNewPassword = isObject(ctx.body) ? ctx.body.isNewPassword : undefined;
  if (isNewPassword !== undefined && typeof isNewPassword !== 'boolean') {
    return badRequest('isNewPassword must be a boolean');
  }
  if (isNewPassword === true) {
    const masked = findMaskedValues(input);
    if (masked.length > 0) {
      return badRequest(
        `Data source ${name}: ${masked.join(', ')} holds the masked value "******" with isNewPassword: true`,
      );
    }
  }
  const success = !deps.store.isTestFailure(name);
  const now = new Date().toISOString();
  deps.store.replaceConnection(name, {
    ...stored,
    connectionStatusTest: { is_success: success, last_connection: now },
  });
  deps.record.addChange({ op: 'test', kind: 'connection', name, id: stored._id, at: Date.now() });
  const message = success
    ? `Connection to ${name} succeeded`
    : `Connection to ${name} failed: the data source did not accept the connection (emulated failure)`;
  return ok(
    deps.settings.testAnswerShape === 'success'
      ? { success, message }
      : { operationStatus: success ? 'SUCCESS' : 'FAILED', message },
    true,
  );
}

// ---- references (scanners, credentials) ---------------------------------------------------------

/**
 * `GET scanner-status` ([code] route; the shape is a [guess]): the envelope with `data.scanners` and the
 * same list at the top level, so either reading finds `[{name, scanner_group, status}]`.
 */
function listScanners(deps: HandlerDeps): Reply {
  const scanners = deps.store.scanners.map((s) => ({ ...s }));
  return ok(envelope({ scanners }, { scanners }));
}

/**
 * `GET credentials` ([guess] route and shape): stored credentials by `credential_id`, secrets masked,
 * as the envelope with `data.credentials` and the same list at the top level.
 */
function listCredentials(deps: HandlerDeps): Reply {
  const credentials = deps.store.credentials.map((c) => maskConnection(c));
  return ok(envelope({ credentials }, { credentials }));
}

function getConnectorTemplate(type: string): Reply {
  const template = getTemplate(type);
  if (template === undefined) return notFound(`No data source template for type '${type}'`);
  return ok(template);
}
