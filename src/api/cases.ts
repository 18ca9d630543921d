/** Security cases (spec 4.4 to 4.6). STUB: signatures fixed, bodies being written (issue #2). */
import type { HttpClient } from './http.js';
import type { BulkCaseUpdate, ListOptions, SecurityCase } from './types.js';

/** Every matching case, page by page, `caseId` filled from `caseId ?? id`. */
export declare function listCases(client: HttpClient, options?: ListOptions): AsyncIterable<SecurityCase>;

/** PATCH /actionable-insights/cases:update; returns the ids the service reported. Retried when transient: it sets a field to a fixed value, so repeating it is harmless. */
export declare function updateCasesBulk(client: HttpClient, update: BulkCaseUpdate): Promise<{ readonly caseIds: readonly string[] }>;

/** PATCH /actionable-insights/case-status/{caseId} with auditReason. Retried when transient (idempotent). */
export declare function updateCaseStatus(
  client: HttpClient,
  caseId: string,
  change: { readonly caseStatus: string; readonly auditReason: string },
): Promise<void>;
