/**
 * The import journal: JSON Lines, append-only, mode 0600, one record per line. It is what makes an
 * import resumable and exactly-once:
 *
 * - the first record (`begin`) binds the file to one snapshot (sha256) and one target URL;
 * - an `intent` is made durable (fsync) BEFORE its POST is sent, an `outcome` is written after;
 * - an intent with no outcome is "in doubt": the next run asks the target by name before sending again.
 *
 * A crash can tear the last line (a write that did not finish): a final line without its newline is
 * ignored and truncated away when the journal is reopened. A complete line that is not a valid record
 * is corruption and is refused, naming the line.
 *
 * A lock file (`<journal>.lock`, pid + hostname) refuses a second concurrent run; a lock left by a dead
 * process on this host is taken over. The journal never holds a credential value: names, ids, HTTP
 * statuses, (scrubbed) service messages and images of objects with every secret masked.
 *
 * Records are tagged unions: `kind` (begin, resume, intent, outcome), and for intents and outcomes
 * `object` (connection, scan-profile) and `op` (create, update, delete). Creates carry the masked body
 * sent (`image`), updates and deletes the masked before-image (`before`) that undo puts back. Records
 * of older journals have no `object`/`op` and are read as connection creates.
 */
import { closeSync, constants as fsConstants, openSync, readSync } from 'node:fs';
import { type FileHandle, link, open, readFile, truncate, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { FileWriteError, InputFileError, UsageError } from '../errors.js';
import { guardFileWrite, syncFolder, toFileWriteError } from '../files.js';
import { scrub } from '../secrets.js';

/** Version of the journal's record format. */
export const JOURNAL_FORMAT_VERSION = 1;

/** What a journal is bound to; a run with a different snapshot or target is refused. */
export interface JournalBinding {
  readonly snapshotSha256: string;
  /** Target base URL, normalised (see {@link normaliseTargetUrl}). */
  readonly targetUrl: string;
}

/** First record: binds the journal. */
export interface BeginRecord extends JournalBinding {
  readonly kind: 'begin';
  readonly formatVersion: number;
  readonly tool: string;
  readonly at: string;
}

/** A later run picked the journal up again (informational). */
export interface ResumeRecord {
  readonly kind: 'resume';
  readonly tool: string;
  readonly at: string;
}

/** The kind of object a record is about; absent in journals written before scan profiles (= connection). */
export type JournalObject = 'connection' | 'scan-profile';

/** What a record's request does; absent in create-only journals of earlier versions (= create). */
export type JournalOp = 'create' | 'update' | 'delete';

/**
 * An image of an object as kept in a journal: server-managed fields dropped, every secret masked
 * (`"******"` when it had a value, see `connections/images.ts`). Never a credential value.
 */
export type SafeImage = Readonly<Record<string, unknown>>;

interface IntentBase {
  readonly kind: 'intent';
  readonly object: JournalObject;
  /** The snapshot's name (for update and delete: the target's name, which is the same). */
  readonly name: string;
  /** The name the request addresses (POSTed, PUT or DELETEd). */
  readonly targetName: string;
  readonly sourceId?: string;
  /** 1 for the first request of this entry in this run, 2 for a resend after an in-doubt answer, ... */
  readonly attempt: number;
  readonly at: string;
}

/**
 * Written and fsync'd before each write request; a tagged union on `op`. Records of older journals
 * have no `op` and no `object`: they are read as connection creates.
 */
export type IntentRecord =
  | (IntentBase & {
      readonly op: 'create';
      /** The body sent, secrets masked: what undo compares with before deleting (absent in old journals). */
      readonly image?: SafeImage;
    })
  | (IntentBase & {
      readonly op: 'update';
      /** The object before the update, secrets masked. */
      readonly before: SafeImage;
      /** The body sent, secrets masked. */
      readonly image: SafeImage;
      /** JSON pointers of the secrets the update sent in clear: undo needs their earlier values. */
      readonly secretsSent: readonly string[];
    })
  | (IntentBase & {
      readonly op: 'delete';
      /** The object before the delete, secrets masked. */
      readonly before: SafeImage;
    });

interface OutcomeBase {
  readonly kind: 'outcome';
  readonly object: JournalObject;
  readonly name: string;
  readonly targetName: string;
  readonly at: string;
}

/** How an entry ended: applied (by the answer or found by a look-up), or definitely rejected. */
export type OutcomeRecord =
  | (OutcomeBase & {
      readonly op: 'create';
      readonly result: 'created';
      readonly targetId: string | undefined;
      /** `post`: the POST answered; `lookup`: an in-doubt POST was found applied by a look-up by name. */
      readonly via: 'post' | 'lookup';
    })
  | (OutcomeBase & {
      readonly op: 'update';
      readonly result: 'updated';
      readonly targetId: string | undefined;
    })
  | (OutcomeBase & {
      readonly op: 'delete';
      readonly result: 'deleted';
      readonly targetId: string | undefined;
      /** `request`: the DELETE answered; `absent`: the name was already gone (an earlier attempt). */
      readonly via: 'request' | 'absent';
    })
  | (OutcomeBase & {
      readonly op: JournalOp;
      readonly result: 'failed';
      readonly httpStatus: number | undefined;
      /** The service's message, scrubbed of registered secrets. */
      readonly message: string;
    });

/** What the journal says about an update or delete of one connection (by name). */
export interface JournalChangeState {
  readonly op: 'update' | 'delete';
  readonly state: 'done' | 'failed' | 'in-doubt';
  readonly type: string | undefined;
}

/** What the profile phase does to a scan profile of the target. */
export type ProfileAction = 'create' | 'update' | 'delete';

/**
 * Written and fsync'd before each scan profile request (POST, PUT or DELETE). `name` is the snapshot's
 * (or, for a delete, the target's) profile name, `targetName` the name sent. Replayed by the profile
 * phase (`profiles-phase.ts`), not by {@link replayJournal}'s connection states.
 */
export interface ProfileIntentRecord {
  readonly kind: 'profile-intent';
  readonly name: string;
  readonly action: ProfileAction;
  readonly targetName: string;
  readonly targetId?: string | undefined;
  readonly attempt: number;
  readonly at: string;
}

/** How a scan profile request ended. */
export interface ProfileOutcomeRecord {
  readonly kind: 'profile-outcome';
  readonly name: string;
  readonly action: ProfileAction;
  readonly result: 'done' | 'failed';
  readonly targetName: string;
  readonly targetId?: string | undefined;
  /** `request`: the request answered; `lookup`: an in-doubt request was found applied in the target's list. */
  readonly via?: 'request' | 'lookup';
  readonly httpStatus?: number | undefined;
  /** The service's message (failed), scrubbed of registered secrets. */
  readonly message?: string;
  readonly at: string;
}

/** Every record kind of the journal. */
export type JournalRecord =
  | BeginRecord
  | ResumeRecord
  | IntentRecord
  | OutcomeRecord
  | ProfileIntentRecord
  | ProfileOutcomeRecord;

/** What the journal says about one snapshot entry (by its snapshot name). */
export type JournalEntryState =
  | {
      readonly state: 'done';
      readonly targetName: string;
      readonly targetId: string | undefined;
      readonly sourceId?: string;
    }
  | {
      readonly state: 'failed';
      readonly targetName: string;
      readonly httpStatus: number | undefined;
      readonly message: string;
    }
  | { readonly state: 'in-doubt'; readonly targetName: string; readonly sourceId?: string };

/** The result of replaying a journal's text. */
export interface JournalReplay {
  readonly begin: BeginRecord | undefined;
  /** Every complete, valid record, in file order. */
  readonly records: readonly JournalRecord[];
  /** Per snapshot name, the state the last create record of a connection left it in. */
  readonly entries: ReadonlyMap<string, JournalEntryState>;
  /** Per connection name, the state the last update or delete record left it in. */
  readonly changes: ReadonlyMap<string, JournalChangeState>;
  /** Length in bytes of the valid prefix (the file is truncated to it when the tail was torn). */
  readonly validBytes: number;
  /** True when a final line without its newline was ignored. */
  readonly tornTail: boolean;
}

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

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

/** Check one parsed line; returns the record or a reason it is not one. */
function checkRecord(value: unknown): JournalRecord | string {
  if (!isObject(value)) return 'expected a JSON object';
  switch (value.kind) {
    case 'begin':
      if (!isString(value.snapshotSha256) || !isString(value.targetUrl))
        return 'begin needs snapshotSha256 and targetUrl';
      if (typeof value.formatVersion !== 'number') return 'begin needs a formatVersion';
      if (value.formatVersion > JOURNAL_FORMAT_VERSION) {
        return `journal format ${value.formatVersion} is newer than this tool reads (${JOURNAL_FORMAT_VERSION})`;
      }
      return value as unknown as BeginRecord;
    case 'resume':
      return value as unknown as ResumeRecord;
    case 'intent': {
      if (!isString(value.name) || !isString(value.targetName)) return 'intent needs name and targetName';
      const record = normaliseTags(value);
      if (typeof record === 'string') return record;
      if ((record.op === 'update' || record.op === 'delete') && !isObject(record.before))
        return `${record.op} intent needs a before-image`;
      return record as unknown as IntentRecord;
    }
    case 'outcome': {
      if (!isString(value.name) || !isString(value.targetName)) return 'outcome needs name and targetName';
      const record = normaliseTags(value);
      if (typeof record === 'string') return record;
      const expected = { create: 'created', update: 'updated', delete: 'deleted' }[record.op as JournalOp];
      if (record.result !== expected && record.result !== 'failed')
        return `outcome result of a ${String(record.op)} must be '${expected}' or 'failed'`;
      return record as unknown as OutcomeRecord;
    }
    case 'profile-intent':
    case 'profile-outcome':
      if (!isString(value.name) || !isString(value.targetName))
        return `${value.kind} needs name and targetName`;
      if (value.action !== 'create' && value.action !== 'update' && value.action !== 'delete')
        return `${value.kind} action must be 'create', 'update' or 'delete'`;
      if (value.kind === 'profile-outcome' && value.result !== 'done' && value.result !== 'failed')
        return "profile-outcome result must be 'done' or 'failed'";
      return value as unknown as ProfileIntentRecord | ProfileOutcomeRecord;
    default:
      return `unknown record kind ${JSON.stringify(value.kind)}`;
  }
}

/** Fill `op` and `object` of a record written before they existed (create-only journals). */
function normaliseTags(value: Record<string, unknown>): Record<string, unknown> | string {
  const op = value.op ?? 'create';
  const object = value.object ?? 'connection';
  if (op !== 'create' && op !== 'update' && op !== 'delete') return `unknown op ${JSON.stringify(op)}`;
  if (object !== 'connection' && object !== 'scan-profile') return `unknown object ${JSON.stringify(object)}`;
  return { ...value, op, object };
}

/** Fold one record into the per-entry state (exhaustive over record kinds). */
function applyRecord(
  entries: Map<string, JournalEntryState>,
  changes: Map<string, JournalChangeState>,
  record: JournalRecord,
): void {
  if ((record.kind === 'intent' || record.kind === 'outcome') && record.object !== 'connection') return;
  if ((record.kind === 'intent' || record.kind === 'outcome') && record.op !== 'create') {
    const previous = changes.get(record.name);
    const type =
      record.kind === 'intent' && typeof record.before.type === 'string'
        ? record.before.type
        : previous?.type;
    const state = record.kind === 'intent' ? 'in-doubt' : record.result === 'failed' ? 'failed' : 'done';
    changes.set(record.name, { op: record.op, state, type });
    return;
  }
  switch (record.kind) {
    case 'begin':
    case 'resume':
    case 'profile-intent':
    case 'profile-outcome':
      return;
    case 'intent':
      entries.set(record.name, {
        state: 'in-doubt',
        targetName: record.targetName,
        ...(record.sourceId === undefined ? {} : { sourceId: record.sourceId }),
      });
      return;
    case 'outcome': {
      const previous = entries.get(record.name);
      const sourceId = previous && previous.state !== 'failed' ? previous.sourceId : undefined;
      if (record.result === 'created') {
        entries.set(record.name, {
          state: 'done',
          targetName: record.targetName,
          targetId: record.targetId,
          ...(sourceId === undefined ? {} : { sourceId }),
        });
      } else {
        entries.set(record.name, {
          state: 'failed',
          targetName: record.targetName,
          httpStatus: record.httpStatus,
          message: record.message,
        });
      }
      return;
    }
    default: {
      const unreachable: never = record;
      throw new Error(`unhandled journal record ${JSON.stringify(unreachable)}`);
    }
  }
}

/** Reads records again by place (see {@link ReplayOptions.onRecord}). */
export interface JournalRecordReader {
  /** The record at `at`; throws InputFileError when the line there is no longer that record's. */
  read(at: RecordPlace): JournalRecord;
  /** Idempotent. */
  close(): void;
}

/** Open `path` to read records again by place (the file is opened on the first read). */
export function openJournalRecordReader(path: string): JournalRecordReader {
  let fd: number | undefined;
  return {
    read(at) {
      fd ??= openSync(path, 'r');
      const bytes = Buffer.allocUnsafe(at.length);
      const read = readSync(fd, bytes, 0, at.length, at.offset);
      let record: JournalRecord | string | undefined;
      if (read === at.length) {
        try {
          record = checkRecord(JSON.parse(bytes.toString('utf8')));
        } catch {
          // reported below
        }
      }
      // A short read, a line that no longer parses or is no longer a record: not the line replayed.
      if (record === undefined || typeof record === 'string') {
        throw new InputFileError(path, undefined, 'the journal changed while it was being read', {
          hint: 'Do not run an import or undo with this journal while undoing; re-run the undo',
        });
      }
      return record;
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}

/** Options of {@link replayJournal} and the journal readers. */
export interface ReplayOptions {
  /**
   * Which records {@link JournalReplay.records} keeps (default: every one). The connection states are
   * built from every record either way; an import keeps only its scan profile records, so that a
   * journal of 100 000 creates (each intent with its masked image) is not held in memory.
   */
  readonly keepRecord?: (record: JournalRecord) => boolean;
  /**
   * Called with every valid record, in file order, with where its line is (to read it again with
   * {@link openJournalRecordReader} instead of keeping it).
   */
  readonly onRecord?: (record: JournalRecord, at: RecordPlace) => void;
}

/** Where a record's line is in the journal file. */
export interface RecordPlace {
  readonly offset: number;
  /** Bytes of the line, without its newline. */
  readonly length: number;
}

/** Replays records one line at a time (shared by the text and the file readers). */
class Replayer {
  readonly records: JournalRecord[] = [];
  readonly entries = new Map<string, JournalEntryState>();
  readonly changes = new Map<string, JournalChangeState>();
  begin: BeginRecord | undefined;
  validBytes = 0;
  private lineNo = 0;

  constructor(
    private readonly file: string,
    private readonly keep: ((record: JournalRecord) => boolean) | undefined,
    private readonly onRecord?: (record: JournalRecord, at: RecordPlace) => void,
  ) {}

  /** One complete line (without its newline) of `lineBytes` bytes, newline included. */
  line(line: string, lineBytes: number): void {
    this.lineNo += 1;
    if (line.trim() === '') {
      this.validBytes += lineBytes;
      return;
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      throw new InputFileError(this.file, this.lineNo, 'not a JSON journal record', {
        hint: 'The journal is damaged; move it aside to start over (entries already created are then found as existing)',
      });
    }
    const record = checkRecord(parsed);
    if (typeof record === 'string') throw new InputFileError(this.file, this.lineNo, record);
    // Any record before `begin` is refused here, so no `begin` yet means this is the first record.
    if (this.begin === undefined && record.kind !== 'begin') {
      throw new InputFileError(this.file, this.lineNo, "the first record of a journal must be 'begin'");
    }
    if (record.kind === 'begin') {
      if (this.begin !== undefined)
        throw new InputFileError(this.file, this.lineNo, "a second 'begin' record");
      this.begin = record;
    }
    if (this.keep === undefined || record.kind === 'begin' || this.keep(record)) this.records.push(record);
    applyRecord(this.entries, this.changes, record);
    this.onRecord?.(record, { offset: this.validBytes, length: lineBytes - 1 });
    this.validBytes += lineBytes;
  }

  result(tornTail: boolean): JournalReplay {
    const { begin, records, entries, changes, validBytes } = this;
    return { begin, records, entries, changes, validBytes, tornTail };
  }
}

/**
 * Replay a journal's text (pure). A final line without a newline is torn and ignored; any complete
 * line that is not a valid record throws an {@link InputFileError} naming it.
 */
export function replayJournal(text: string, file = 'journal', options: ReplayOptions = {}): JournalReplay {
  const replayer = new Replayer(file, options.keepRecord, options.onRecord);
  let offset = 0;
  let tornTail = false;
  while (offset < text.length) {
    const nl = text.indexOf('\n', offset);
    if (nl === -1) {
      tornTail = true;
      break;
    }
    const line = text.slice(offset, nl);
    offset = nl + 1;
    replayer.line(line, Buffer.byteLength(line, 'utf8') + 1);
  }
  return replayer.result(tornTail);
}

/**
 * Replay the journal file at `path` as {@link replayJournal} replays text, reading it in chunks (a
 * journal of a large import is hundreds of MB: never one string). Undefined when there is no file;
 * `size` is the file's length in bytes, so a caller can tell whether the valid prefix is all of it.
 */
export async function replayJournalFile(
  path: string,
  options: ReplayOptions = {},
): Promise<{ readonly replay: JournalReplay; readonly size: number } | undefined> {
  const replayer = new Replayer(path, options.keepRecord, options.onRecord);
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let size = 0;
  let pending: Buffer[] = [];
  try {
    for await (const chunk of handle.createReadStream({ highWaterMark: 256 * 1024, autoClose: false })) {
      const buf = chunk as Buffer;
      size += buf.length;
      let start = 0;
      for (let nl = buf.indexOf(0x0a, start); nl !== -1; nl = buf.indexOf(0x0a, start)) {
        const piece = buf.subarray(start, nl);
        const bytes = pending.length === 0 ? piece : Buffer.concat([...pending, piece]);
        pending = [];
        replayer.line(bytes.toString('utf8'), bytes.length + 1);
        start = nl + 1;
      }
      if (start < buf.length) pending.push(Buffer.from(buf.subarray(start)));
    }
  } finally {
    await handle.close();
  }
  // A last piece without its newline is torn, as in the text replay (even if it is only blanks).
  return { replay: replayer.result(pending.length > 0), size };
}

/** The lock's content. */
interface LockInfo {
  readonly pid: number;
  readonly hostname: string;
  readonly startedAt: string;
}

/** Locks this process holds now, so that a lock with our own pid can be told from a dead namesake's. */
const heldLocks = new Set<string>();

/** Record `lockPath` as held by this process; the returned function releases it. */
function holdLock(lockPath: string): () => Promise<void> {
  heldLocks.add(lockPath);
  return async () => {
    heldLocks.delete(lockPath);
    await unlink(lockPath).catch(() => undefined);
  };
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else, so it is alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Replace a lock left by a dead process with ours, without ever removing a live one. Two runs may judge
 * the same lock stale at once, so the replacement happens under a second lock, `<lock>.takeover`
 * (created atomically by link, like the lock): only its holder re-reads the lock, deletes it if it is
 * still the dead holder's, and links its own. Returns true when the lock is now ours; false sends the
 * caller round again (it will then find the new holder alive and refuse).
 */
async function takeOverStaleLock(lockPath: string, ownLockFile: string, dead: LockInfo): Promise<boolean> {
  const mutex = `${lockPath}.takeover`;
  try {
    await link(ownLockFile, mutex);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another run is taking over. A takeover lock whose process died is removed, so that a crash in
    // this short step cannot block every later run.
    const other = await readLockInfo(mutex);
    if (other !== undefined && other.pid !== process.pid && !isProcessAlive(other.pid)) {
      await unlink(mutex).catch(() => undefined);
    }
    return false;
  }
  try {
    const current = await readLockInfo(lockPath);
    if (current !== undefined && (current.pid !== dead.pid || current.startedAt !== dead.startedAt)) {
      return false; // someone took it legitimately meanwhile
    }
    // Never one this process holds (judged stale while another opener here was taking it over).
    if (current?.pid === process.pid && heldLocks.has(lockPath)) return false;
    await unlink(lockPath).catch(() => undefined);
    try {
      await link(ownLockFile, lockPath);
      // Held from this moment, not once the takeover lock is released below: another opener in this
      // process reading our pid in the lock meanwhile would judge it a dead process's (a lock with our
      // own pid that we do not hold) and take it over too (the stale-lock race test, seen once).
      heldLocks.add(lockPath);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw error;
    }
  } finally {
    await unlink(mutex).catch(() => undefined);
  }
}

async function readLockInfo(path: string): Promise<LockInfo | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as LockInfo;
  } catch {
    return undefined;
  }
}

/**
 * Take `<journal>.lock`. The lock is written to a private temporary file and hard-linked into place, so
 * it appears atomically and always complete (link fails with EEXIST when another run holds it).
 */
async function acquireLock(lockPath: string): Promise<() => Promise<void>> {
  const info: LockInfo = { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString() };
  const tmp = `${lockPath}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await writeFile(tmp, `${JSON.stringify(info)}\n`, { mode: 0o600 });
    for (let tries = 0; tries < 3; tries++) {
      try {
        await link(tmp, lockPath);
        return holdLock(lockPath);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      let holder: LockInfo | undefined;
      try {
        holder = JSON.parse(await readFile(lockPath, 'utf8')) as LockInfo;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue; // released meanwhile
        holder = undefined;
      }
      const sameHost = holder !== undefined && holder.hostname === hostname();
      // Our own pid in a lock this process does not hold is a previous process that had the same pid
      // (PID 1 in a container is the usual case): dead, whatever kill(pid, 0) says.
      const alive =
        holder !== undefined &&
        (holder.pid === process.pid ? heldLocks.has(lockPath) : isProcessAlive(holder.pid));
      if (holder === undefined || !sameHost || alive) {
        const who = holder
          ? `process ${holder.pid} on ${holder.hostname} since ${holder.startedAt}`
          : 'another run';
        throw new UsageError(`Another import is using this journal (${who}; lock ${lockPath})`, {
          hint: 'Wait for it to finish; if no such run exists any more, delete the lock file and re-run',
        });
      }
      if (await takeOverStaleLock(lockPath, tmp, holder)) return holdLock(lockPath);
    }
    throw new UsageError(`Could not take the journal lock ${lockPath}`, { hint: 'Re-run the command' });
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

/**
 * Take the lock of the journal at `path` (`<path>.lock`, as {@link openJournal} does) without opening
 * it: `undo` holds its import's journal still while it reads and reverts it. Resolves to the release.
 */
export function lockJournal(path: string): Promise<() => Promise<void>> {
  return guardFileWrite(path, 'journal', () => acquireLock(`${path}.lock`));
}

/** An open, locked journal. */
export interface Journal {
  readonly path: string;
  /** What the file held when opened (before this run's records). */
  readonly replay: JournalReplay;
  /** True when the file did not exist (or was empty) and this run began it. */
  readonly fresh: boolean;
  /**
   * Append a record; resolves once it is on disk (fsync). Records appended while a sync is running are
   * written and synced together (group commit), so many concurrent POSTs do not each pay for a sync.
   */
  append(record: JournalRecord): Promise<void>;
  /** Wait for pending records, close the file and release the lock. Idempotent. */
  close(): Promise<void>;
}

/** Options of {@link openJournal}. */
export interface OpenJournalOptions extends ReplayOptions {
  readonly tool: string;
  /**
   * Called once the lock is held, before the journal is read: a caller may start what must follow the
   * lock (the import lists the target: a run that held the lock has ended, its creates show) while the
   * journal, which can be 100 MB, is replayed.
   */
  readonly onLocked?: () => void;
  /**
   * Called just before the lock is released (the journal closed, or its opening failed once the lock
   * was held): what must exist only while the lock is held goes then (the import's images file).
   */
  readonly beforeRelease?: () => void;
  /** Clock for record timestamps (tests). */
  readonly now?: () => Date;
}

interface Pending {
  readonly line: string;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
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
export async function peekJournal(
  path: string,
  binding: JournalBinding,
  options: ReplayOptions = {},
): Promise<JournalReplay | undefined> {
  let read: Awaited<ReturnType<typeof replayJournalFile>>;
  try {
    read = await replayJournalFile(path, options);
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
 * refuse a journal bound to another snapshot or target (exit 2), and append `begin` or `resume`.
 */
export async function openJournal(
  path: string,
  binding: JournalBinding,
  options: OpenJournalOptions,
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
    checkBinding(path, begin, binding);
    handle = await open(path, fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT, 0o600);
    const fh = handle;
    const now = options.now ?? (() => new Date());
    let queue: Pending[] = [];
    let draining: Promise<void> | undefined;
    let closed = false;

    const drain = async (): Promise<void> => {
      while (queue.length > 0) {
        const batch = queue;
        queue = [];
        try {
          // writeFile writes every byte (write() may stop short on a filling disk); O_APPEND appends.
          await fh.writeFile(batch.map((p) => p.line).join(''));
          await fh.datasync();
          for (const p of batch) p.resolve();
        } catch (error) {
          // Typed, so that a full disk is one line and exit 2, not "a bug": the records before this batch
          // are on disk, and an intent that did not make it was never followed by its POST.
          const code = (error as NodeJS.ErrnoException).code ?? 'error';
          const failure = new FileWriteError(path, `cannot write the journal (${code})`, {
            hint: 'Free disk space or fix permissions, then re-run the same command to resume',
            cause: error,
          });
          for (const p of batch) p.reject(failure);
        }
      }
      draining = undefined;
    };

    const append = (record: JournalRecord): Promise<void> => {
      if (closed) return Promise.reject(new Error('journal is closed'));
      const safe =
        record.kind === 'outcome' && record.result === 'failed'
          ? { ...record, message: scrub(record.message) }
          : record.kind === 'profile-outcome' && record.message !== undefined
            ? { ...record, message: scrub(record.message) }
            : record;
      // Images are masked already; scrubbing the line as well keeps a value the service echoed unmasked out.
      const text = JSON.stringify(safe);
      const line = record.kind === 'intent' && record.op !== 'create' ? scrub(text) : text;
      return new Promise<void>((resolve, reject) => {
        queue.push({ line: `${line}\n`, resolve, reject });
        // Started after what this turn of the event loop appends: one write and one sync for an
        // answer's outcome and the intent written ahead beside it, or for the first eight intents,
        // where each record alone cost a write and a sync of its own.
        draining ??= nextTurn().then(drain);
      });
    };

    const fresh = begin === undefined;
    if (fresh) {
      await append({
        kind: 'begin',
        formatVersion: JOURNAL_FORMAT_VERSION,
        snapshotSha256: binding.snapshotSha256,
        targetUrl: binding.targetUrl,
        tool: options.tool,
        at: now().toISOString(),
      });
      // The file's name in its folder must be durable too, before the first intent's POST.
      await syncFolder(dirname(path));
    } else {
      await append({ kind: 'resume', tool: options.tool, at: now().toISOString() });
    }

    let closing: Promise<void> | undefined;
    return {
      path,
      replay,
      fresh,
      append,
      close() {
        closing ??= (async () => {
          closed = true;
          await draining;
          await fh.close().catch(() => undefined);
          options.beforeRelease?.();
          await release();
        })();
        return closing;
      },
    };
  } catch (error) {
    await handle?.close().catch(() => undefined);
    options.beforeRelease?.();
    await release();
    throw toFileWriteError(error, path, 'journal');
  }
}
