/** The `cases update` workflow: the preview, then one bulk PATCH `cases:update` (an audit trail optional). */

import { randomUUID } from 'node:crypto';
import { caseWriteId, listCases, updateCasesBulk } from '../api/cases.js';
import { type EnvironmentPorts, withClient } from '../api/client-factory.js';
import type { HttpClient } from '../api/http.js';
import { countOf } from '../display-name.js';
import { DdsError, FileWriteError } from '../errors.js';
import type { BulkCaseUpdate, SecurityCase } from '../model/security-case.js';
import { assertWriteConfirmed, confirmRequired } from '../protected.js';
import { appendAuditRecords, type CaseAuditRecord } from './audit.js';
import { toFilterClauses } from './filter.js';
import { firstCasesPage } from './look-up.js';

/** Ids matched but not reported (`missing`), reported but not matched (`unexpected`), in order. */
export function compareReportedIds(
  matchedIds: readonly string[],
  reportedIds: readonly string[],
): { readonly missing: string[]; readonly unexpected: string[] } {
  const reported = new Set(reportedIds);
  const matched = new Set(matchedIds);
  return {
    missing: matchedIds.filter((id) => !reported.has(id)),
    unexpected: reportedIds.filter((id) => !matched.has(id)),
  };
}

const writeIdOf = (c: SecurityCase): string => caseWriteId(c) ?? c.caseId;

export interface CaseUpdateResult {
  readonly caseIds: readonly string[];
  /** Matched, not reported, and holding the new value when read back (an answer lost, the PATCH sent again). */
  readonly readBack: readonly string[];
  readonly missing: readonly string[];
  readonly unexpected: readonly string[];
}

const READ_BACK_PAGE = 100;

/**
 * Of the matched cases the answer did not report, those whose field now holds the new value, read back
 * by the id field each carries, a page per 100 (`id` before `caseId`, which is filled from `id`).
 */
async function readBackApplied(
  client: HttpClient,
  update: BulkCaseUpdate,
  matched: readonly SecurityCase[],
  missing: readonly string[],
): Promise<string[]> {
  const wanted = new Set(missing);
  const applied: string[] = [];
  try {
    for (const field of ['_id', 'id', 'caseId'] as const) {
      const ids = matched.map(writeIdOf).filter((id, i) => wanted.has(id) && matched[i]?.[field] === id);
      for (const id of ids) wanted.delete(id);
      for (let i = 0; i < ids.length; i += READ_BACK_PAGE) {
        const chunk = ids.slice(i, i + READ_BACK_PAGE);
        for (const c of await firstCasesPage(client, field, chunk, { pageSize: READ_BACK_PAGE }))
          if (chunk.includes(writeIdOf(c)) && c[update.field] === update.newValue) applied.push(writeIdOf(c));
      }
    }
  } catch {} // the update went through all the same: what is not confirmed stays "not reported"
  return applied;
}

/** Send the bulk update; with an audit file, the before-states first (a failure there sends nothing). */
async function applyCaseUpdate(
  client: HttpClient,
  options: UpdateCasesOptions,
  matched: readonly SecurityCase[],
  now: () => Date,
): Promise<CaseUpdateResult> {
  const { update, auditFile } = options;
  const base = {
    runId: randomUUID(),
    environment: client.environment.url,
    change: { field: update.field, newValue: update.newValue },
    ...(options.reason === undefined ? {} : { reason: options.reason }),
  } as const;
  const outcome = () => ({
    ...base,
    at: now().toISOString(),
    filters: update.filters,
    matched: matched.length,
  });
  if (auditFile !== undefined) {
    const at = now().toISOString();
    await appendAuditRecords(
      auditFile,
      matched.map(
        (c): CaseAuditRecord => ({ event: 'matched', ...base, at, caseId: writeIdOf(c), before: c }),
      ),
    );
  }
  let caseIds: readonly string[];
  try {
    ({ caseIds } = await updateCasesBulk(client, update));
  } catch (error) {
    if (auditFile !== undefined) {
      const message = error instanceof DdsError ? error.message : String(error);
      // The PATCH's own error is the one reported: a trail that cannot take this line must not hide it.
      await appendAuditRecords(auditFile, [{ event: 'failed', ...outcome(), error: message }]).catch(
        () => undefined,
      );
    }
    throw error;
  }
  // The service reports the ids its writes take (`_id` where cases carry one), not a friendly `caseId`.
  const compared = compareReportedIds(matched.map(writeIdOf), caseIds);
  const { unexpected } = compared;
  const readBack =
    compared.missing.length > 0 ? await readBackApplied(client, update, matched, compared.missing) : [];
  const confirmed = new Set(readBack);
  const missing = compared.missing.filter((id) => !confirmed.has(id));
  if (auditFile !== undefined) {
    try {
      await appendAuditRecords(auditFile, [
        { event: 'updated', ...outcome(), caseIds, readBack, missing, unexpected },
      ]);
    } catch (error) {
      if (!(error instanceof FileWriteError)) throw error;
      // Say the PATCH went through, or the exit 2 of a failed write reads as "nothing was changed".
      const code = (error.cause as NodeJS.ErrnoException | undefined)?.code ?? 'error';
      throw new FileWriteError(
        error.file,
        `the update was applied (${countOf(caseIds.length, 'case')} reported), but its outcome could not be added to the audit file (${code})`,
        {
          hint: "The change itself is done and the cases' states before it are in the trail; free disk space for the next run",
          cause: error,
        },
      );
    }
  }
  return { caseIds, readBack, missing, unexpected };
}

/** What {@link updateCases} changes, checked; `auditFile` is absolute. */
export interface UpdateCasesOptions {
  readonly update: BulkCaseUpdate;
  readonly dryRun: boolean;
  readonly auditFile: string | undefined;
  readonly reason?: string | undefined;
  /** `--confirm`: the name of a protected environment. */
  readonly confirm: string | undefined;
}

export interface UpdateCasesPorts extends EnvironmentPorts {
  /** Asked once the preview is non-empty, before anything is sent: throws to stop. */
  readonly confirmUpdate: (matched: readonly SecurityCase[]) => Promise<void>;
  readonly now?: () => Date;
}

/** Preview, confirm, update; `onEvent` gets the preview before the confirmation. */
export async function updateCases(
  options: UpdateCasesOptions,
  ports: UpdateCasesPorts,
  onEvent: (event: { readonly kind: 'preview'; readonly matched: readonly SecurityCase[] }) => void,
): Promise<
  | {
      readonly kind: 'dry-run';
      readonly matched: readonly SecurityCase[];
      /** A protected environment: the real run needs `--confirm` with this name. */
      readonly confirmRequired: string | undefined;
    }
  | { readonly kind: 'nothing-matched' }
  | { readonly kind: 'updated'; readonly matched: readonly SecurityCase[]; readonly result: CaseUpdateResult }
> {
  return withClient(ports, async (client, environment) => {
    if (!options.dryRun) assertWriteConfirmed(environment, options.confirm);
    // Full records: the audit keeps their before-state.
    const matched: SecurityCase[] = [];
    const filter = toFilterClauses(options.update.filters);
    for await (const c of listCases(client, { filter, signal: ports.signal })) matched.push(c);
    if (options.dryRun)
      return { kind: 'dry-run', matched, confirmRequired: confirmRequired(environment, options.confirm) };
    onEvent({ kind: 'preview', matched });
    if (matched.length === 0) return { kind: 'nothing-matched' };
    await ports.confirmUpdate(matched);
    const result = await applyCaseUpdate(client, options, matched, ports.now ?? (() => new Date()));
    return { kind: 'updated', matched, result };
  });
}
