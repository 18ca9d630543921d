/**
 * The `cases update --audit FILE` trail (JSON Lines, 0600, fsynced): a `matched` line per case before the
 * bulk PATCH, then one `updated` or `failed`, sharing a `runId`: a crash between leaves the before-states.
 */
import { type FileHandle, open } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import { guardFileWrite, PRIVATE_FILE_MODE } from '../files.js';
import type { BulkCaseUpdate, CaseFilter } from '../model/security-case.js';
import { scrub } from '../secrets.js';

/** What every line of a run's trail says. */
interface AuditRecordBase {
  readonly runId: string;
  readonly at: string;
  readonly environment: string;
  readonly change: Pick<BulkCaseUpdate, 'field' | 'newValue'>;
  /** `--reason`: the bulk PATCH body has no field for it (spec section 5), so the trail keeps it. */
  readonly reason?: string;
}

/** What the lines after the bulk PATCH add. */
interface AuditOutcomeBase extends AuditRecordBase {
  readonly filters: readonly CaseFilter[];
  readonly matched: number;
}

/** One line of the trail. */
export type CaseAuditRecord =
  | (AuditRecordBase & {
      readonly event: 'matched';
      readonly caseId: string;
      readonly before: Readonly<Record<string, unknown>>;
    })
  | (AuditOutcomeBase & {
      readonly event: 'updated';
      readonly caseIds: readonly string[];
      /** Matched by the preview, not reported, read back with the new value. */
      readonly readBack: readonly string[];
      /** Matched by the preview, not reported, not read back so. */
      readonly missing: readonly string[];
      /** Reported but not matched by the preview (changed in between). */
      readonly unexpected: readonly string[];
    })
  | (AuditOutcomeBase & {
      readonly event: 'failed';
      readonly error: string;
    });

/** Records per write: a million `matched` lines joined would pass V8's longest string. */
const RECORDS_PER_WRITE = 10_000;

/** `records` as JSON lines, scrubbed, a bounded piece at a time. */
function* linesOf(records: readonly CaseAuditRecord[]): Generator<string> {
  for (let i = 0; i < records.length; i += RECORDS_PER_WRITE) {
    // Scrubbed like every other output: an error message in a `failed` line may quote the service.
    yield scrub(
      records
        .slice(i, i + RECORDS_PER_WRITE)
        .map((r) => `${JSON.stringify(r)}\n`)
        .join(''),
    );
  }
}

/**
 * Append `records` (in pieces of {@link RECORDS_PER_WRITE}), then fsync; an unopenable file is a usage error
 * before the PATCH, a failed write a {@link FileWriteError} (both exit 2). The trail stays whole lines: a
 * torn last line of an earlier run is trimmed first, and a failed write of this one cut back.
 */
export async function appendAuditRecords(file: string, records: readonly CaseAuditRecord[]): Promise<void> {
  if (records.length === 0) return;
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
      const writeAll = async () => {
        for (const piece of linesOf(records)) await handle.writeFile(piece, 'utf8');
      };
      if (!info.isFile()) {
        await writeAll();
        return;
      }
      // open()'s mode applies only to a new file.
      await handle.chmod(PRIVATE_FILE_MODE);
      const start = await findWholeLinesEnd(handle, info.size);
      if (start < info.size) await handle.truncate(start);
      try {
        await writeAll();
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

/** The length of the longest prefix of the file that ends with a newline (0 when it holds none). */
async function findWholeLinesEnd(handle: FileHandle, size: number): Promise<number> {
  const buffer = Buffer.alloc(Math.min(64 * 1024, size));
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
