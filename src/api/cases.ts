/** Security cases (spec 4.4 to 4.6). */

import type { BulkCaseUpdate, SecurityCase } from '../model/security-case.js';
import { isRecord } from '../own-property.js';
import type { HttpClient } from './http.js';
import { encodeFilter, itemsOf, type Page, pagesThrough, readListPage, unexpectedShape } from './paging.js';
import type { ListOptions } from './types.js';

const LIST_PATH = '/actionable-insights/all-cases';

/**
 * The id a case's writes take: `_id` when present, else `caseId ?? id` (api-notes [docs], "verified
 * against the live tenant": `_id` is the Mongo id the writes take, `caseId` sometimes `SPC-123`).
 */
export function caseWriteId(c: Readonly<Record<string, unknown>>): string | undefined {
  for (const value of [c._id, c.caseId, c.id]) {
    if (typeof value === 'string' && value !== '') return value;
    if (typeof value === 'number') return String(value);
  }
  return undefined;
}

/**
 * A cases page: `data.cases` (an empty result may omit it), `data` as an array, or a top-level array
 * (spec: "a list of case objects"), as sent; a missing `caseId` is filled from `id`.
 */
function readCasesPage(body: unknown): Page<SecurityCase> {
  const { items, totalCount } = readListPage(body, 'cases', LIST_PATH, true);
  const cases = items.map((c) => {
    // Handed on as parsed: no copy per case of a million.
    if (typeof c.caseId === 'string') return c as SecurityCase;
    const id = c.caseId ?? c.id;
    return { ...c, caseId: typeof id === 'number' ? String(id) : (id as string) } as SecurityCase;
  });
  return { items: cases, totalCount };
}

/** `field:desc` as the spec's "field, optionally followed by ASC or DESC"; anything else as given. */
export function encodeCaseSort(sort: string | undefined): string | undefined {
  if (sort === undefined) return undefined;
  const match = /^([^:\s]+):(asc|desc)$/i.exec(sort.trim());
  return match ? `${match[1]} ${match[2]!.toUpperCase()}` : sort;
}

/** Every matching case, `caseId` filled from `caseId ?? id`. */
export function listCases(client: HttpClient, options: ListOptions = {}): AsyncGenerator<SecurityCase> {
  return itemsOf(listCasePages(client, options));
}

/** Every page of matching cases: for a caller whose work per case is synchronous. */
export function listCasePages(
  client: HttpClient,
  options: ListOptions = {},
): AsyncGenerator<readonly SecurityCase[]> {
  return pagesThrough(
    client,
    {
      path: LIST_PATH,
      what: 'cases',
      query: {
        sort: encodeCaseSort(options.sort),
        filter: encodeFilter(options.filter),
        fields: options.fields,
      },
      readPage: readCasesPage,
      idOf: caseWriteId,
      // A million cases are listed in bounded memory: see docs/service.md, "Lists and paging".
      readAgain: false,
    },
    options,
  );
}

/** PATCH /actionable-insights/cases:update; the ids the service reported. */
export async function updateCasesBulk(
  client: HttpClient,
  update: BulkCaseUpdate,
): Promise<{ readonly caseIds: readonly string[] }> {
  const path = '/actionable-insights/cases:update';
  const body = await client.request<unknown>({
    method: 'PATCH',
    path,
    body: {
      type: 'CasesDB',
      subType: 'updateCases',
      additionalProperties: {
        field: update.field,
        newValue: update.newValue,
        casesFilters: update.filters.map((f) => ({
          filterField: f.filterField,
          filterValues: [...f.filterValues],
        })),
      },
    },
    // Safe to repeat: it sets a field to a fixed value on the cases the filters select.
    retry: 'safe',
  });
  const top = isRecord(body) ? body : {};
  const data = isRecord(top.data) ? top.data : {};
  const ids = [top.caseIds, data.caseIds].find((v): v is unknown[] => Array.isArray(v));
  if (!ids) throw unexpectedShape(path, 'no caseIds in the answer');
  return { caseIds: ids.map((id) => String(id)) };
}

/** PATCH /actionable-insights/case-status/{caseId} with auditReason. */
export async function updateCaseStatus(
  client: HttpClient,
  caseId: string,
  change: { readonly caseStatus: string; readonly auditReason: string },
): Promise<void> {
  await client.request<unknown>({
    method: 'PATCH',
    path: `/actionable-insights/case-status/${encodeURIComponent(caseId)}`,
    body: { caseStatus: change.caseStatus, auditReason: change.auditReason },
    // Safe to repeat: setting the same status twice leaves the case as one request would.
    retry: 'safe',
  });
}
