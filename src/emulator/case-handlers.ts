/** The security case endpoints (`GET all-cases`, `PATCH cases:update`, `PATCH case-status/{id}`). */
import { caseKeyOf } from './deployment.js';
import {
  matchesFilter,
  parseFields,
  parseFilter,
  parsePaging,
  parseSort,
  project,
  sortItems,
} from './query.js';
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
import type { SecurityCaseRecord } from './types.js';

/** Case statuses the service knows (api-notes: `closed` too, [docs]). */
export const CASE_STATUSES: readonly string[] = [
  'open',
  'acknowledged',
  'silenced',
  'resolved',
  'remediated',
  'closed',
];

export function listCases(ctx: RequestContext, deps: HandlerDeps): Reply {
  const { skip, limit } = parsePaging(
    ctx.params,
    deps.settings.defaultPageSize,
    deps.settings.maxPageSize,
    deps.settings.paging,
  );
  const filter = parseFilter(ctx.params.get('filter'));
  const sort = parseSort(ctx.params.get('sort'));
  const fields = parseFields(ctx.params.get('fields'));
  // Without a filter or a sort the page is a slice of the store: paging 1M cases stays linear.
  const plain = filter.length === 0 && sort.length === 0;
  const matched = plain ? deps.store.cases : deps.store.cases.filter((c) => matchesFilter(c, filter));
  const sorted = plain ? matched : sortItems(matched, sort);
  const page = sorted
    .slice(skip, skip + limit)
    .map((c) => (fields === null ? { ...c } : project(c, fields, ['_id', 'id', 'caseId'])));
  const data: Record<string, unknown> = {};
  // Real deployments may leave `cases` out of an empty answer.
  if (page.length > 0 || !deps.settings.omitEmptyCases) data.cases = page;
  data.totalCount = matched.length;
  return ok(envelope(data));
}

export function updateCases(actionType: string, ctx: RequestContext, deps: HandlerDeps): Reply {
  if (actionType !== 'update')
    return badRequest(`Unsupported action type '${actionType}': only cases:update is supported`);
  const body = ctx.body;
  if (!isObject(body)) return badRequest('Request body must be an object');
  if (body.type !== 'CasesDB') return badRequest(`type must be "CasesDB", got ${JSON.stringify(body.type)}`);
  if (body.subType !== 'updateCases')
    return badRequest(`subType must be "updateCases", got ${JSON.stringify(body.subType)}`);
  const ap = body.additionalProperties;
  if (!isObject(ap))
    return badRequest('additionalProperties must be an object {field, newValue, casesFilters}');
  const { field, newValue, casesFilters } = ap;
  if (field !== 'caseStatus' && field !== 'assignee') {
    return badRequest(
      `additionalProperties.field must be caseStatus or assignee, got ${JSON.stringify(field)}`,
    );
  }
  if (typeof newValue !== 'string' || newValue === '')
    return badRequest('additionalProperties.newValue must be a non-empty string');
  if (field === 'caseStatus' && !CASE_STATUSES.includes(newValue)) {
    return badRequest(`Unknown case status '${newValue}'; expected one of ${CASE_STATUSES.join(', ')}`);
  }
  // No filter would select every case: refused, as a careful service would.
  if (!Array.isArray(casesFilters) || casesFilters.length === 0) {
    return badRequest(
      'additionalProperties.casesFilters must be a non-empty array of {filterField, filterValues}',
    );
  }
  const filters: Array<{ field: string; values: Set<string> }> = [];
  for (const [i, f] of casesFilters.entries()) {
    if (!isObject(f) || typeof f.filterField !== 'string' || f.filterField === '') {
      return badRequest(`casesFilters[${i}].filterField must be a non-empty string`);
    }
    if (
      !Array.isArray(f.filterValues) ||
      f.filterValues.length === 0 ||
      !f.filterValues.every((v) => typeof v === 'string')
    ) {
      return badRequest(`casesFilters[${i}].filterValues must be a non-empty array of strings`);
    }
    filters.push({ field: f.filterField, values: new Set(f.filterValues as string[]) });
  }
  const reason =
    typeof ap.auditReason === 'string'
      ? ap.auditReason
      : typeof body.auditReason === 'string'
        ? body.auditReason
        : undefined;
  const selected = deps.store.cases.filter((c) => filters.every((f) => f.values.has(String(c[f.field]))));
  for (const c of selected) deps.store.updateCase(c, field, newValue, reason, 'cases:update');
  const caseIds = selected.map(caseKeyOf);
  // Both readings of "an object that lists the ids ... in a field named caseIds".
  return ok(envelope({ caseIds }, { caseIds }), selected.length > 0);
}

export function updateCaseStatus(caseId: string, ctx: RequestContext, deps: HandlerDeps): Reply {
  const found: SecurityCaseRecord | undefined = deps.store.getCase(caseId);
  if (found === undefined) return notFound(`Case ${caseId} not found`);
  const body = ctx.body;
  if (!isObject(body)) return badRequest('Request body must be an object {caseStatus, auditReason}');
  const { caseStatus, auditReason } = body;
  if (typeof caseStatus !== 'string' || !CASE_STATUSES.includes(caseStatus)) {
    return badRequest(
      `caseStatus must be one of ${CASE_STATUSES.join(', ')}, got ${JSON.stringify(caseStatus)}`,
    );
  }
  if (auditReason !== undefined && typeof auditReason !== 'string')
    return badRequest('auditReason must be a string');
  deps.store.updateCase(found, 'caseStatus', caseStatus, auditReason, 'case-status');
  return ok(envelope({ caseId: caseKeyOf(found), caseStatus }), true);
}
