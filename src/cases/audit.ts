/**
 * The `cases update --audit FILE` trail: JSON Lines, appended, mode 0600, fsynced. Before the bulk PATCH
 * one `matched` line per case holds its state before the change; after it, one `updated` (or `failed`)
 * line holds the ids the service reported. Lines of one run share a `runId`, so a crash between the
 * two still leaves the before-states on disk.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import { guardFileWrite, PRIVATE_FILE_MODE } from '../files.js';
import type { BulkCaseUpdate, CaseFilter } from '../model/security-case.js';
import { scrub } from '../secrets.js';

/** What every line of a run's audit trail says: which run, when, where, what change. */
interface AuditRecordBase {
  readonly runId: string;
  readonly at: string;
  readonly environment: string;
  readonly change: Pick<BulkCaseUpdate, 'field' | 'newValue'>;
  /**
   * `cases update --reason`: why the change was made. The bulk PATCH body has no field for it (spec
   * section 5), so the audit trail is where it is kept.
   */
  readonly reason?: string;
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

/**
 * Append `records` to `file` (created with mode 0600) in one write, then fsync. A file that cannot be
 * opened is a usage error (exit 2), raised before the bulk PATCH is sent; a write that fails (a full
 * disk) is a {@link FileWriteError} (exit 2).
 *
 * The trail stays a file of whole lines: a last line torn by an earlier run (killed, or the disk filled
 * mid-write) is trimmed away before appending, and a write of this run that fails is cut back to where
 * it started.
 */
export async function appendAuditRecords(file: string, records: readonly CaseAuditRecord[]): Promise<void> {
  if (records.length === 0) return;
  // Scrubbed like every other output: an error message in a `failed` line may quote the service.
  const text = scrub(records.map((r) => `${JSON.stringify(r)}\n`).join(''));
  let handle: FileHandle;
  try {
    handle = await open(file, 'a+', PRIVATE_FILE_MODE);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'error';
    throw new UsageError(`Cannot write the audit file ${file} (${code})`, {
      hint: 'Check the --audit path and its folder',
      cause,
    });
  }
  try {
    await guardFileWrite(file, 'audit file', async () => {
      const info = await handle.stat();
      if (!info.isFile()) {
        await handle.writeFile(text, 'utf8');
        return;
      }
      // The mode of open() applies only to a new file: an existing audit file is brought to 0600 too.
      await handle.chmod(PRIVATE_FILE_MODE);
      const start = await findWholeLinesEnd(handle, info.size);
      if (start < info.size) await handle.truncate(start);
      try {
        await handle.writeFile(text, 'utf8');
        await handle.sync();
      } catch (error) {
        // Best effort: a trail cut back to its last whole line; if this fails too, the next run trims.
        await handle.truncate(start).catch(() => undefined);
        throw error;
      }
    });
  } finally {
    await handle.close();
  }
}

/** Bytes read at a time when looking for the last newline from the end. */
const TAIL_CHUNK = 64 * 1024;

/** The length of the longest prefix of the file that ends with a newline (0 when it holds none). */
async function findWholeLinesEnd(handle: FileHandle, size: number): Promise<number> {
  const buffer = Buffer.alloc(Math.min(TAIL_CHUNK, size));
  let end = size;
  while (end > 0) {
    const length = Math.min(buffer.length, end);
    const start = end - length;
    const { bytesRead } = await handle.read(buffer, 0, length, start);
    const newline = buffer.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (newline >= 0) return start + newline + 1;
    end = start;
  }
  return 0;
}
