/**
 * Which case a user means: an id typed by a user may be any of the three a case carries (api-notes
 * [docs]: `_id`, the Mongo id the write endpoints take; `caseId`, sometimes a friendly `SPC-123`;
 * `id`, in the dspm example). Each is looked up once, by the field it most likely is (a 24-hex id as
 * `_id` first, anything else as `caseId` first), then by the others while it is not found; up to 50
 * ids share one request. A case found is written to by {@link caseWriteId}; an id no look-up finds is
 * sent as given (the service then says whether it knows it).
 */
import { caseWriteId, listCasePages } from '../api/cases.js';
import type { HttpClient } from '../api/http.js';

/** The fields a case id may be, in the order they are tried for an id that is not 24 hex digits. */
export const CASE_ID_FIELDS = ['caseId', 'id', '_id'] as const;
export type CaseIdField = (typeof CASE_ID_FIELDS)[number];

export const LOOK_UP_BATCH = 50;

/** One id given by a user, resolved to the id a write takes. */
export interface CaseTarget {
  readonly given: string;
  /** The id the PATCH is sent to. */
  readonly writeId: string;
  /** The case's `caseId` (perhaps a friendly `SPC-123`), when a look-up found it. */
  readonly caseId: string | undefined;
  /** The field the look-up found it by; undefined: not found, sent as given. */
  readonly foundBy: CaseIdField | undefined;
  /** The fields looked up, in order. */
  readonly lookedUp: readonly CaseIdField[];
}

/** The order in which the fields are tried for `id`. */
export function lookUpOrder(id: string): readonly CaseIdField[] {
  return /^[0-9a-f]{24}$/i.test(id) ? ['_id', 'caseId', 'id'] : CASE_ID_FIELDS;
}

/** Resolve each of `ids` (in order, without repeats) to the id a write takes. */
export async function lookUpCases(
  client: HttpClient,
  ids: readonly string[],
  signal?: AbortSignal,
): Promise<CaseTarget[]> {
  const found = new Map<string, { writeId: string; caseId: string | undefined; foundBy: CaseIdField }>();
  const tried = new Map<string, CaseIdField[]>(ids.map((id) => [id, []]));
  for (let stage = 0; stage < CASE_ID_FIELDS.length; stage++) {
    const byField = new Map<CaseIdField, string[]>();
    for (const id of tried.keys()) {
      if (found.has(id)) continue;
      const field = lookUpOrder(id)[stage] as CaseIdField;
      byField.set(field, [...(byField.get(field) ?? []), id]);
    }
    for (const [field, group] of byField) {
      for (let i = 0; i < group.length; i += LOOK_UP_BATCH) {
        const batch = group.slice(i, i + LOOK_UP_BATCH);
        for (const id of batch) tried.get(id)?.push(field);
        const wanted = new Set(batch);
        const pages = listCasePages(client, {
          filter: [{ field, value: batch, operator: 'in' }],
          fields: CASE_ID_FIELDS.join(','),
          // One page: a service that ignored the filter is not read to its end (matches are checked here).
          pageSize: 2 * LOOK_UP_BATCH,
          ...(signal ? { signal } : {}),
        });
        for await (const page of pages) {
          for (const c of page) {
            const value = c[field];
            const key = typeof value === 'number' ? String(value) : value;
            const writeId = caseWriteId(c);
            if (typeof key !== 'string' || !wanted.has(key) || found.has(key) || writeId === undefined)
              continue;
            found.set(key, { writeId, caseId: c.caseId, foundBy: field });
          }
          break;
        }
      }
    }
  }
  return [...tried].map(([given, lookedUp]) => {
    const hit = found.get(given);
    return hit === undefined
      ? { given, writeId: given, caseId: undefined, foundBy: undefined, lookedUp }
      : { given, ...hit, lookedUp };
  });
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
