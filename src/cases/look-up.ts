/**
 * Which case a user means: an id may be any of the three a case carries (api-notes [docs]: `_id`, which
 * writes take; `caseId`, sometimes `SPC-123`; `id`, in the dspm example). Looked up by the likeliest
 * field first, then the others (docs/service.md, "Security cases"); an id not found is sent as given.
 */
import { caseWriteId, listCasePages } from '../api/cases.js';
import type { HttpClient } from '../api/http.js';
import type { SecurityCase } from '../model/security-case.js';

/** The fields a case id may be, in the order they are tried for an id that is not 24 hex digits. */
export const CASE_ID_FIELDS = ['caseId', 'id', '_id'] as const;
export type CaseIdField = (typeof CASE_ID_FIELDS)[number];

/** One id given by a user, resolved to the id a write takes (`foundBy` undefined: sent as given). */
export interface CaseTarget {
  readonly given: string;
  readonly writeId: string;
  readonly caseId: string | undefined;
  readonly foundBy: CaseIdField | undefined;
  readonly lookedUp: readonly CaseIdField[];
}

/** Resolve each of `ids` (in order, without repeats) to the id a write takes. */
export async function lookUpCases(
  client: HttpClient,
  ids: readonly string[],
  signal?: AbortSignal,
): Promise<CaseTarget[]> {
  const targets: CaseTarget[] = [];
  for (const given of new Set(ids)) {
    const lookedUp: CaseIdField[] = [];
    let target: CaseTarget = { given, writeId: given, caseId: undefined, foundBy: undefined, lookedUp };
    const order: readonly CaseIdField[] = /^[0-9a-f]{24}$/i.test(given)
      ? ['_id', 'caseId', 'id']
      : CASE_ID_FIELDS;
    for (const field of order) {
      lookedUp.push(field);
      const found = await findCase(client, field, given, signal);
      if (found === undefined) continue;
      target = { given, writeId: found.writeId, caseId: found.caseId, foundBy: field, lookedUp };
      break;
    }
    targets.push(target);
  }
  return targets;
}

/** The cases whose `field` is one of `ids`, one page: a service that ignored the filter is not read on. */
export async function firstCasesPage(
  client: HttpClient,
  field: CaseIdField,
  ids: readonly string[],
  options: { readonly pageSize: number; readonly fields?: string; readonly signal?: AbortSignal | undefined },
): Promise<readonly SecurityCase[]> {
  const { signal, ...rest } = options;
  const pages = listCasePages(client, {
    filter: [{ field, value: [...ids], operator: 'in' }],
    ...rest,
    ...(signal ? { signal } : {}),
  });
  const { value: page = [] } = await pages.next();
  await pages.return(undefined);
  return page;
}

/** The case whose `field` is `id`, from the first page of a listing filtered on it. */
async function findCase(
  client: HttpClient,
  field: CaseIdField,
  id: string,
  signal: AbortSignal | undefined,
): Promise<{ readonly writeId: string; readonly caseId: string | undefined } | undefined> {
  const page = await firstCasesPage(client, field, [id], {
    pageSize: 10,
    fields: CASE_ID_FIELDS.join(','),
    signal,
  });
  for (const c of page) {
    const value = c[field];
    const writeId = caseWriteId(c);
    if ((typeof value === 'number' ? String(value) : value) === id && writeId !== undefined)
      return { writeId, caseId: c.caseId };
  }
  return undefined;
}

/** How a target was resolved, for `--dry-run` and the outcome lines: `(caseId SPC-12; found by caseId)`. */
export function describeTarget(target: CaseTarget): string {
  if (target.foundBy === undefined) return `not found by ${target.lookedUp.join(', ')}: sent as given`;
  const parts: string[] = [];
  if (target.caseId !== undefined && target.caseId !== target.writeId) parts.push(`caseId ${target.caseId}`);
  if (target.given !== target.writeId && target.given !== target.caseId) parts.push(`given ${target.given}`);
  parts.push(`found by ${target.foundBy}`);
  return parts.join('; ');
}
