/**
 * `cases update`: preview with a list (the same filters as the bulk body, operator `in`), then one bulk
 * PATCH `cases:update`, then compare the ids the service reported with the preview.
 */
import { randomUUID } from 'node:crypto';
import { listCases, updateCasesBulk } from '../api/cases.js';
import type { HttpClient } from '../api/http.js';
import { DdsError, FileWriteError } from '../errors.js';
import type { BulkCaseUpdate, CaseFilter, SecurityCase } from '../model/security-case.js';
import { appendAuditRecords, type CaseAuditRecord, toAuditChange } from './audit.js';
import { toFilterClauses } from './filter.js';

/** The cases the bulk update would select, read with the same filters (full records: the audit keeps their before-state). */
export async function previewCaseUpdate(
  client: HttpClient,
  filters: readonly CaseFilter[],
  options: { readonly signal?: AbortSignal } = {},
): Promise<SecurityCase[]> {
  const matched: SecurityCase[] = [];
  for await (const c of listCases(client, {
    filter: toFilterClauses(filters),
    ...(options.signal ? { signal: options.signal } : {}),
  })) {
    matched.push(c);
  }
  return matched;
}

/** Ids matched by the preview but not reported (`missing`) and reported but not matched (`unexpected`), in their lists' order. */
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

/**
 * The trail could not take the `updated` line after the PATCH went through: say so, or the exit 2 of a
 * failed write would read as "nothing was changed".
 */
function describeAppliedButUnaudited(error: unknown, updated: number): unknown {
  if (!(error instanceof FileWriteError)) return error;
  const code = (error.cause as NodeJS.ErrnoException | undefined)?.code ?? 'error';
  return new FileWriteError(
    error.file,
    `the update was applied (${updated} case${updated === 1 ? '' : 's'} reported), but its outcome could not be added to the audit file (${code})`,
    {
      hint: "The change itself is done and the cases' states before it are in the trail; free disk space for the next run",
      cause: error,
    },
  );
}

/** What the bulk update did. */
export interface CaseUpdateResult {
  readonly caseIds: readonly string[];
  readonly missing: readonly string[];
  readonly unexpected: readonly string[];
}

/** Options of {@link applyCaseUpdate}. */
export interface ApplyCaseUpdateOptions {
  /** `--audit FILE`. */
  readonly auditFile?: string | undefined;
  /** The environment as named in the audit (its URL; never a token). */
  readonly environment: string;
  /** `--reason TEXT`, recorded on every audit line. */
  readonly reason?: string | undefined;
  readonly now?: () => Date;
}

/**
 * Send the bulk update for the `matched` preview. With an audit file, the before-states are written
 * first (a failure to write stops the run before anything is sent), the result or the failure after.
 */
export async function applyCaseUpdate(
  client: HttpClient,
  update: BulkCaseUpdate,
  matched: readonly SecurityCase[],
  options: ApplyCaseUpdateOptions,
): Promise<CaseUpdateResult> {
  const now = options.now ?? (() => new Date());
  const runId = randomUUID();
  const change = toAuditChange(update);
  const base = {
    runId,
    environment: options.environment,
    change,
    ...(options.reason === undefined ? {} : { reason: options.reason }),
  } as const;
  if (options.auditFile !== undefined) {
    const at = now().toISOString();
    await appendAuditRecords(
      options.auditFile,
      matched.map((c): CaseAuditRecord => ({ event: 'matched', ...base, at, caseId: c.caseId, before: c })),
    );
  }
  let caseIds: readonly string[];
  try {
    // The client may retry this PATCH on a transient error: it sets one field to a fixed value on the
    // cases the filters select, so sending it twice leaves the cases as sending it once.
    ({ caseIds } = await updateCasesBulk(client, update));
  } catch (error) {
    if (options.auditFile !== undefined) {
      const message = error instanceof DdsError ? error.message : String(error);
      // The PATCH's own error is the one reported: a trail that cannot take this line must not hide it.
      await appendAuditRecords(options.auditFile, [
        {
          event: 'failed',
          ...base,
          at: now().toISOString(),
          filters: update.filters,
          matched: matched.length,
          error: message,
        },
      ]).catch(() => undefined);
    }
    throw error;
  }
  const { missing, unexpected } = compareReportedIds(
    matched.map((c) => c.caseId),
    caseIds,
  );
  if (options.auditFile !== undefined) {
    try {
      await appendAuditRecords(options.auditFile, [
        {
          event: 'updated',
          ...base,
          at: now().toISOString(),
          filters: update.filters,
          matched: matched.length,
          caseIds,
          missing,
          unexpected,
        },
      ]);
    } catch (error) {
      throw describeAppliedButUnaudited(error, caseIds.length);
    }
  }
  return { caseIds, missing, unexpected };
}
