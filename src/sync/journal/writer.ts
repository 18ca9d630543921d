/**
 * Writing the journal: open (or begin) it under its lock, replay what it holds, truncate a torn tail,
 * refuse a journal bound to another snapshot or target, and append records (an intent durably, before
 * its request leaves). Appends are written and synced synchronously: docs/why.md, "Why the journal is
 * written synchronously", says what is synced when and what that costs.
 */
import { fdatasyncSync, constants as fsConstants, ftruncateSync } from 'node:fs';
import { type FileHandle, open, truncate } from 'node:fs/promises';
import { dirname } from 'node:path';
import { FileWriteError, InputFileError } from '../../errors.js';
import { syncFolder, toFileWriteError, writeAllSync } from '../../files.js';
import { scrub } from '../../secrets.js';
import { TOOL_NAME, TOOL_VERSION } from '../../version.js';
import { lockJournal } from './lock.js';
import {
  type BeginRecord,
  JOURNAL_FORMAT_VERSION,
  type JournalBinding,
  type JournalRecord,
  type RunCommand,
} from './records.js';
import { type JournalReplay, type ReplayOptions, replayJournal, replayJournalFile } from './replay.js';

/** Normalise a base URL for binding and comparisons: lower-case scheme and host, no trailing slash or /api/v1. */
export function normaliseTargetUrl(url: string): string {
  let u = url.trim().replace(/\/+$/, '');
  if (u.toLowerCase().endsWith('/api/v1')) u = u.slice(0, -'/api/v1'.length);
  try {
    const parsed = new URL(u);
    const path = parsed.pathname === '/' ? '' : parsed.pathname.replace(/\/+$/, '');
    return `${parsed.protocol}//${parsed.host}${path}`.toLowerCase();
  } catch {
    return u.toLowerCase();
  }
}

/**
 * Default journal path: `<snapshot>.<target host>.journal.jsonl`, the host with its port, made safe
 * for a file name (`127.0.0.1:8080` -> `127.0.0.1_8080`).
 */
export function defaultJournalPath(snapshotPath: string, targetUrl: string): string {
  let host: string;
  try {
    host = new URL(targetUrl).host;
  } catch {
    host = targetUrl;
  }
  const safe = host.replace(/[^A-Za-z0-9.-]/g, '_') || 'target';
  return `${snapshotPath}.${safe}.journal.jsonl`;
}

/** An open, locked journal. */
export interface Journal {
  readonly path: string;
  /** What the file held when opened (before this run's records); read it before {@link releaseReplay}. */
  readonly replay: JournalReplay;
  /**
   * Let go of {@link replay} once the caller has taken what it needs (the run it continues or undoes):
   * it holds the state of every object of every earlier run, 100 000 of them after a large import.
   */
  releaseReplay(): void;
  /** True when the file did not exist (or was empty) and this run began it. */
  readonly fresh: boolean;
  /**
   * Append a record; resolves once it is written, and for every record but an outcome or a withdrawal
   * once it is on disk (fdatasync). The records appended before the flush (a microtask) runs share one
   * write and one sync. Outcomes and withdrawals reach the disk with the next synced record, or at
   * {@link close}.
   */
  append(record: JournalRecord): Promise<void>;
  /** Append the record that opens run `run` (an undo names the run it takes back), or closes it. */
  startRun(run: number, command: RunCommand, undoes?: number, includeInDoubt?: boolean): Promise<void>;
  endRun(run: number): Promise<void>;
  /** Wait for pending records, close the file and release the lock. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link openJournal}. */
export interface OpenJournalOptions extends ReplayOptions {
  /** Who writes (`begin` and `run` records); default this tool and its version. */
  readonly tool?: string;
  /**
   * Called once the lock is held, before the journal is read: a caller may start what must follow the
   * lock (the import lists the target: a run that held the lock has ended, its creates show) while the
   * journal, which can be 100 MB, is replayed.
   */
  readonly onLocked?: () => void;
  /** Clock for record timestamps (tests). */
  readonly now?: () => Date;
}

interface Pending {
  readonly line: string;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Append every byte of `text` (O_APPEND) to a file that ends at `end`, continuing short writes (a filling
 * disk); the new end. A failed write cuts the file back to `end`: a part of a line left there would join
 * the next record's line, a damaged line in the middle of the journal.
 */
function appendAll(fd: number, text: string, end: number): number {
  const bytes = Buffer.from(text, 'utf8');
  try {
    writeAllSync(fd, bytes);
  } catch (error) {
    try {
      ftruncateSync(fd, end);
    } catch {} // the write's own error is the one to report
    throw error;
  }
  return end + bytes.length;
}

/** Refuse a journal whose `begin` binds it to another snapshot or target (exit 2, nothing sent). */
function checkBinding(path: string, begin: BeginRecord | undefined, binding: JournalBinding): void {
  if (begin === undefined) return;
  if (begin.snapshotSha256 !== binding.snapshotSha256) {
    throw new InputFileError(
      path,
      1,
      `this journal belongs to another snapshot (sha256 ${begin.snapshotSha256.slice(0, 12)}..., this one is ${binding.snapshotSha256.slice(0, 12)}...)`,
      {
        hint: 'Pass --journal with a new file for this snapshot, or re-run with the snapshot the journal was started with',
      },
    );
  }
  if (normaliseTargetUrl(begin.targetUrl) !== normaliseTargetUrl(binding.targetUrl)) {
    throw new InputFileError(
      path,
      1,
      `this journal belongs to another target (${begin.targetUrl}, this run targets ${binding.targetUrl})`,
      {
        hint: 'Pass --journal with a new file for this target, or re-run against the target the journal was started with',
      },
    );
  }
}

/**
 * Read the journal at `path` without locking or writing (a dry run): undefined when it cannot be read
 * (none yet); refused like {@link openJournal} when bound to another snapshot or target.
 */
export async function peekJournal(path: string, binding: JournalBinding): Promise<JournalReplay | undefined> {
  let read: Awaited<ReturnType<typeof replayJournalFile>>;
  try {
    read = await replayJournalFile(path);
  } catch (error) {
    if (error instanceof InputFileError) throw error;
    return undefined;
  }
  if (read === undefined) return undefined;
  checkBinding(path, read.replay.begin, binding);
  return read.replay;
}

/**
 * Open (or begin) the journal at `path` for `binding`: take the lock, replay, truncate a torn tail,
 * refuse a journal bound to another snapshot or target (exit 2), and append `begin` to a new one.
 * Without a binding (undo) the journal must exist, and its own `begin` binds it.
 */
export async function openJournal(
  path: string,
  binding: JournalBinding | undefined,
  options: OpenJournalOptions = {},
): Promise<Journal> {
  // A folder that cannot be written, a full disk, a path naming a folder: one FileWriteError (exit 2).
  const release = await lockJournal(path);
  let handle: FileHandle | undefined;
  try {
    options.onLocked?.();
    const read = await replayJournalFile(path, options);
    const replay = read?.replay ?? replayJournal('', path);
    if (read !== undefined && (replay.tornTail || replay.validBytes !== read.size)) {
      await truncate(path, replay.validBytes);
    }
    const begin = replay.begin;
    if (binding === undefined && begin === undefined) {
      throw new InputFileError(path, 1, 'the journal is empty: the import wrote nothing to undo');
    }
    const bound = binding ?? (begin as BeginRecord);
    checkBinding(path, begin, bound);
    handle = await open(path, fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT, 0o600);
    const fh = handle;
    let end = (await fh.stat()).size;
    const now = options.now ?? (() => new Date());
    const tool = options.tool ?? `${TOOL_NAME} ${TOOL_VERSION}`;
    let queue: Pending[] = [];
    let needsSync = false;
    let closed = false;

    // In a microtask: the records appended before it runs share one write and one sync; a batch of
    // outcomes alone is left to the next sync.
    const flush = (): void => {
      if (queue.length === 0) return;
      const batch = queue;
      const sync = needsSync;
      queue = [];
      needsSync = false;
      try {
        end = appendAll(fh.fd, batch.map((p) => p.line).join(''), end);
        if (sync) fdatasyncSync(fh.fd);
        for (const p of batch) p.resolve();
      } catch (error) {
        // Typed, so that a full disk is one line and exit 2, not "a bug": the records before this batch
        // are written (every intent among them on disk), and an intent that did not make it was never
        // followed by its request.
        const code = (error as NodeJS.ErrnoException).code ?? 'error';
        const failure = new FileWriteError(path, `cannot write the journal (${code})`, {
          hint: 'Free disk space or fix permissions, then re-run the same command to resume',
          cause: error,
        });
        for (const p of batch) p.reject(failure);
      }
    };

    const append = (record: JournalRecord): Promise<void> => {
      if (closed) return Promise.reject(new Error('journal is closed'));
      const safe =
        record.kind === 'outcome' && record.result === 'failed'
          ? { ...record, message: scrub(record.message) }
          : record;
      // Images are masked already; scrubbing the line as well keeps a value the service echoed unmasked out.
      const text = JSON.stringify(safe);
      const line = record.kind === 'intent' && record.op !== 'create' ? scrub(text) : text;
      return new Promise<void>((resolve, reject) => {
        if (queue.length === 0) queueMicrotask(flush);
        queue.push({ line: `${line}\n`, resolve, reject });
        if (record.kind !== 'outcome' && record.kind !== 'withdrawn') needsSync = true;
      });
    };

    const fresh = begin === undefined;
    if (fresh) {
      await append({
        kind: 'begin',
        formatVersion: JOURNAL_FORMAT_VERSION,
        snapshotSha256: bound.snapshotSha256,
        targetUrl: bound.targetUrl,
        tool,
        at: now().toISOString(),
      });
      // The file's name in its folder must be durable too, before the first intent's POST.
      await syncFolder(dirname(path));
    }

    let closing: Promise<void> | undefined;
    let held: JournalReplay | undefined = replay;
    return {
      path,
      get replay(): JournalReplay {
        if (held === undefined) throw new Error('the journal replay was read after its release');
        return held;
      },
      releaseReplay() {
        held = undefined;
      },
      fresh,
      append,
      startRun: (run, command, undoes, includeInDoubt) =>
        append({
          kind: 'run',
          run,
          command,
          ...(undoes === undefined ? {} : { undoes }),
          // Always said by an undo, so that a resume can tell it from a journal of an earlier version.
          ...(command === 'undo' ? { includeInDoubt: includeInDoubt === true } : {}),
          tool,
          at: now().toISOString(),
        }),
      endRun: (run) => append({ kind: 'run-end', run, at: now().toISOString() }),
      close() {
        closing ??= (async () => {
          closed = true;
          flush();
          // The outcomes written since the last synced record, for a run that stopped (one that finished
          // synced them with its `run-end`). Only a machine crash could still lose one: its intent stays
          // open, the next run looks the name up, and a create found so counts as in doubt.
          try {
            fdatasyncSync(fh.fd);
          } catch {}
          await fh.close().catch(() => undefined);
          await release();
        })();
        return closing;
      },
    };
  } catch (error) {
    await handle?.close().catch(() => undefined);
    await release();
    throw toFileWriteError(error, path, 'journal');
  }
}
