/**
 * The `cases update --audit FILE` trail: JSON Lines, appended, mode 0600, fsynced. Before the bulk PATCH
 * one `matched` line per case holds its state before the change; after it, one `updated` (or `failed`)
 * line holds the ids the service reported. Lines of one run share a `runId`, so a crash between the
 * two still leaves the before-states on disk.
 */
import { open } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import type { BulkCaseUpdate, CaseFilter } from '../model/security-case.js';
import { scrub } from '../secrets.js';

/** The change a run makes. */
export interface AuditChange {
  readonly field: string;
  readonly newValue: string;
}

/** What every line of a run's audit trail says: which run, when, where, what change. */
interface AuditRecordBase {
  readonly runId: string;
  readonly at: string;
  readonly environment: string;
  readonly change: AuditChange;
}

/** What the lines written after the bulk PATCH add: the selection and how many cases it matched. */
interface AuditOutcomeBase extends AuditRecordBase {
  readonly filters: readonly CaseFilter[];
  readonly matched: number;
}

/** One line of the audit trail. */
export type CaseAuditRecord =
  | (AuditRecordBase & {
      readonly event: 'matched';
      readonly caseId: string;
      readonly before: Readonly<Record<string, unknown>>;
    })
  | (AuditOutcomeBase & {
      readonly event: 'updated';
      /** The ids the service reported as updated. */
      readonly caseIds: readonly string[];
      /** Matched by the preview but not reported. */
      readonly missing: readonly string[];
      /** Reported but not matched by the preview (changed in between). */
      readonly unexpected: readonly string[];
    })
  | (AuditOutcomeBase & {
      readonly event: 'failed';
      readonly error: string;
    });

/** The change part of a bulk update. */
export function toAuditChange(update: BulkCaseUpdate): AuditChange {
  return { field: update.field, newValue: update.newValue };
}

/**
 * Append `records` to `file` (created with mode 0600) in one write, then fsync. A file that cannot be
 * written is a usage error (exit 2), raised before the bulk PATCH is sent.
 */
export async function appendAuditRecords(file: string, records: readonly CaseAuditRecord[]): Promise<void> {
  if (records.length === 0) return;
  // Scrubbed like every other output: an error message in a `failed` line may quote the service.
  const text = scrub(records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(file, 'a', 0o600);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'error';
    throw new UsageError(`Cannot write the audit file ${file} (${code})`, {
      hint: 'Check the --audit path and its folder',
      cause,
    });
  }
  try {
    // The mode of open() applies only to a new file: an existing audit file is brought to 0600 too.
    await handle.chmod(0o600);
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}
