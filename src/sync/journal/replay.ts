/**
 * Reading a journal back, folded into runs: per object, the state its last record left it in. A crash
 * can tear the last line: a final line without its newline is ignored (the writer truncates it away on
 * reopening). A complete line that is not a valid record is corruption, refused naming the line.
 */

import { closeSync, createReadStream, openSync, readSync } from 'node:fs';
import { assertNever, InputFileError } from '../../errors.js';
import { MAX_DOCUMENT_DEPTH, nestsTooDeep } from '../../json-depth.js';
import { notOursReason } from '../ownership.js';
import {
  type BeginRecord,
  checkRecord,
  type JournalObject,
  type JournalOp,
  type JournalRecord,
  type RunCommand,
  type RunRecord,
} from './records.js';

/** What the journal says about one object in one run: its last record's state. */
export interface WriteState {
  readonly object: JournalObject;
  readonly op: JournalOp;
  readonly name: string;
  readonly targetName: string;
  /** `in-doubt`: an intent with no outcome (it may or may not have been applied). */
  readonly state: 'done' | 'failed' | 'in-doubt';
  readonly targetId: string | undefined;
  readonly sourceId: string | undefined;
  /** The last intent's. */
  readonly attempt: number;
  /** `lookup`: a create found by name after its answer was lost (in doubt whose it is). */
  readonly via: 'post' | 'lookup' | 'request' | 'absent' | undefined;
  /** The connection type, when an image named it. */
  readonly type: string | undefined;
  readonly httpStatus?: number | undefined;
  readonly message?: string;
  /** `in-doubt`: when the first intent since the write last settled was written (the `not ours` test). */
  readonly intentAt?: string;
}

/** Settled writes of one run, per object kind. */
export interface RunCounts {
  created: number;
  updated: number;
  deleted: number;
  failed: number;
  /** Creates whose answer was lost, found by name afterwards (in doubt: maybe someone else's). */
  found: number;
  /** Creates of a name someone else had created meanwhile (refused, or `not ours`). */
  existed: number;
  /** Of `existed`: in doubt, and found older than the run's intent. */
  notOurs: number;
}

/** One run as the journal tells it. */
export interface RunState {
  readonly run: number;
  readonly command: RunCommand;
  readonly undoes: number | undefined;
  /** An undo run with `--include-in-doubt`; undefined when its record does not say (an earlier version). */
  readonly includeInDoubt: boolean | undefined;
  readonly startedAt: string;
  /** Set by `run-end` (format 1: when nothing was left in doubt). */
  endedAt: string | undefined;
  /** Per object ({@link writeKey}), the state its last record left it in. */
  readonly writes: Map<string, WriteState>;
  readonly counts: Record<JournalObject, RunCounts>;
}

/** The result of replaying a journal. */
export interface JournalReplay {
  readonly begin: BeginRecord | undefined;
  /** Oldest first. */
  readonly runs: readonly RunState[];
  /** Bytes of the valid prefix (the file is truncated to it when the tail was torn). */
  readonly validBytes: number;
  readonly tornTail: boolean;
}

/** The key of an object in a run: its kind and name. */
export function writeKey(object: JournalObject, name: string): string {
  return `${object}\u0000${name}`;
}

/** Where a record's line is in the journal file (`length` without its newline). */
export interface RecordPlace {
  readonly offset: number;
  readonly length: number;
}

/** Options of {@link replayJournal} and the journal readers. */
export interface ReplayOptions {
  /** Every valid record in file order, with where its line is (to read it again later). */
  readonly onRecord?: (record: JournalRecord, at: RecordPlace) => void;
}

/** A run's writes of one kind of object, by name (none for a new run). */
export function writesOf(run: RunState | undefined, object: JournalObject): Map<string, WriteState> {
  const out = new Map<string, WriteState>();
  for (const w of run?.writes.values() ?? []) if (w.object === object) out.set(w.name, w);
  return out;
}

/**
 * The objects of `object` that import runs created under another name (`--on-conflict rename`): the
 * snapshot's name -> the name in the target, the latest run's.
 */
export function renamedCreates(runs: readonly RunState[], object: JournalObject): Map<string, string> {
  const out = new Map<string, string>();
  for (const run of runs) {
    if (run.command !== 'import') continue;
    for (const w of run.writes.values())
      if (w.object === object && w.op === 'create' && w.state === 'done' && w.targetName !== w.name)
        out.set(w.name, w.targetName);
  }
  return out;
}

/** Counts of nothing written. */
export function zeroCounts(): RunCounts {
  return { created: 0, updated: 0, deleted: 0, failed: 0, found: 0, existed: 0, notOurs: 0 };
}

const DAMAGED_JOURNAL_HINT =
  'The journal is damaged; move it aside to start over (entries already created are then found as existing)';

/** Replays records one line at a time, folded into runs (for the text and the file readers). */
class Replayer {
  begin: BeginRecord | undefined;
  validBytes = 0;
  readonly runs: RunState[] = [];
  private lastAt = '';
  private lineNo = 0;
  /** Per open intent (run and key), the object's state before it: what a `withdrawn` puts back. */
  private readonly beforeIntent = new Map<string, WriteState | undefined>();
  /** The start of a line whose newline has not been read yet. */
  private pending: Buffer[] = [];

  constructor(
    private readonly file: string,
    private readonly options: ReplayOptions,
  ) {}

  feed(buf: Buffer): void {
    let start = 0;
    for (let nl = buf.indexOf(0x0a, start); nl !== -1; nl = buf.indexOf(0x0a, start)) {
      const piece = buf.subarray(start, nl);
      const bytes = this.pending.length === 0 ? piece : Buffer.concat([...this.pending, piece]);
      this.pending = [];
      this.line(bytes.toString('utf8'), bytes.length + 1);
      start = nl + 1;
    }
    if (start < buf.length) this.pending.push(Buffer.from(buf.subarray(start)));
  }

  /** One complete line, without its newline; `lineBytes` counts it. */
  private line(line: string, lineBytes: number): void {
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
        hint: DAMAGED_JOURNAL_HINT,
      });
    }
    if (nestsTooDeep(parsed, line.length, MAX_DOCUMENT_DEPTH)) {
      throw new InputFileError(
        this.file,
        this.lineNo,
        `a record nested more than ${MAX_DOCUMENT_DEPTH} levels deep`,
        {
          hint: DAMAGED_JOURNAL_HINT,
        },
      );
    }
    const record = checkRecord(parsed);
    if (typeof record === 'string') throw new InputFileError(this.file, this.lineNo, record);
    if (record.kind !== 'begin' && this.begin === undefined)
      throw new InputFileError(this.file, this.lineNo, "the first record of a journal must be 'begin'");
    if (record.kind === 'begin' && this.begin !== undefined)
      throw new InputFileError(this.file, this.lineNo, "a second 'begin' record");
    if (record.kind === 'begin') this.begin = record;
    this.fold(record);
    this.options.onRecord?.(record, { offset: this.validBytes, length: lineBytes - 1 });
    this.validBytes += lineBytes;
  }

  /** The replay of what was fed; a last piece without its newline is torn (even if it is only blanks). */
  result(): JournalReplay {
    const tornTail = this.pending.length > 0;
    // Format 1 wrote no run-end: its one run ended when nothing was left in doubt.
    const format1 = (this.begin?.formatVersion ?? 1) < 2;
    for (const run of this.runs) {
      if (!format1 || run.endedAt !== undefined || run.run !== 1) continue;
      if (![...run.writes.values()].some((w) => w.state === 'in-doubt')) run.endedAt = this.lastAt;
    }
    return { begin: this.begin, runs: this.runs, validBytes: this.validBytes, tornTail };
  }

  private runState(number: number): RunState {
    // A few runs: a search per record costs nothing next to parsing it.
    const found = this.runs.find((r) => r.run === number);
    if (found !== undefined) return found;
    // Format 1: one run, begun with the journal.
    const run = this.newRun({ run: number, command: 'import', at: this.begin?.at ?? '' });
    this.runs.push(run);
    return run;
  }

  private newRun(record: Pick<RunRecord, 'run' | 'command' | 'undoes' | 'includeInDoubt' | 'at'>): RunState {
    return {
      run: record.run,
      command: record.command,
      undoes: record.undoes,
      includeInDoubt: record.includeInDoubt,
      startedAt: record.at,
      endedAt: undefined,
      writes: new Map(),
      counts: {},
    };
  }

  private fold(record: JournalRecord): void {
    if ('at' in record && typeof record.at === 'string') this.lastAt = record.at;
    if (record.kind === 'begin' || record.kind === 'resume') return;
    if (record.kind === 'run') {
      this.runs.push(this.newRun(record));
      return;
    }
    if (record.kind === 'run-end') {
      this.runState(record.run).endedAt = record.at;
      return;
    }
    const run = this.runState(record.run ?? 1); // format 1: run 1
    const key = writeKey(record.object, record.name);
    const previous = run.writes.get(key);
    const openKey = `${run.run}\u0000${key}`;
    switch (record.kind) {
      case 'withdrawn': {
        // Only the open intent it names; anything else leaves the state as it is.
        if (previous?.state !== 'in-doubt' || previous.attempt !== record.attempt) return;
        const before = this.beforeIntent.get(openKey);
        this.beforeIntent.delete(openKey);
        if (before === undefined) run.writes.delete(key);
        else run.writes.set(key, before);
        return;
      }
      case 'intent': {
        this.beforeIntent.set(openKey, previous);
        const image =
          record.op === 'create'
            ? record.image
            : (record.before ?? (record.op === 'update' ? record.image : undefined));
        const type = typeof image?.type === 'string' ? image.type : previous?.type;
        run.writes.set(key, {
          object: record.object,
          op: record.op,
          name: record.name,
          targetName: record.targetName,
          state: 'in-doubt',
          targetId: record.targetId ?? previous?.targetId,
          sourceId: record.sourceId ?? previous?.sourceId,
          attempt: record.attempt,
          via: undefined,
          type,
          intentAt: previous?.state === 'in-doubt' ? previous.intentAt : record.at,
        });
        return;
      }
      case 'outcome': {
        this.beforeIntent.delete(openKey);
        const counts = run.counts[record.object] ?? zeroCounts();
        run.counts[record.object] = counts;
        counts[record.result === 'exists' ? 'existed' : record.result] += 1;
        if (record.result === 'created' && record.via === 'lookup') counts.found += 1;
        if (record.result === 'exists' && record.createdAt !== undefined) counts.notOurs += 1;
        run.writes.set(key, {
          object: record.object,
          op: record.op,
          name: record.name,
          targetName: record.targetName,
          state: record.result === 'failed' || record.result === 'exists' ? 'failed' : 'done',
          targetId: record.result === 'failed' ? previous?.targetId : (record.targetId ?? previous?.targetId),
          sourceId: previous?.sourceId,
          attempt: previous?.attempt ?? 1,
          via:
            record.result === 'created' || record.result === 'deleted'
              ? record.via
              : record.result === 'updated'
                ? 'request'
                : undefined,
          type: previous?.type,
          ...(record.result === 'failed' ? { httpStatus: record.httpStatus, message: record.message } : {}),
          ...(record.result === 'exists'
            ? {
                message: record.createdAt
                  ? notOursReason(record.createdAt)
                  : 'created by someone else meanwhile',
              }
            : {}),
        });
        return;
      }
      default:
        assertNever(record, 'journal record');
    }
  }
}

/** Replays a journal's text (pure); a complete line that is not a record throws {@link InputFileError}. */
export function replayJournal(text: string, file = 'journal', options: ReplayOptions = {}): JournalReplay {
  const replayer = new Replayer(file, options);
  replayer.feed(Buffer.from(text, 'utf8'));
  return replayer.result();
}

/**
 * Replays the journal file at `path` in chunks (a large import's is hundreds of MB: never one string).
 * Undefined when there is no file; `size` tells a caller whether the valid prefix is all of it.
 */
export async function replayJournalFile(
  path: string,
  options: ReplayOptions = {},
): Promise<{ readonly replay: JournalReplay; readonly size: number } | undefined> {
  const replayer = new Replayer(path, options);
  let size = 0;
  try {
    for await (const chunk of createReadStream(path, { highWaterMark: 256 * 1024 })) {
      size += (chunk as Buffer).length;
      replayer.feed(chunk as Buffer);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return { replay: replayer.result(), size };
}

/** Reads records again by place (see {@link ReplayOptions.onRecord}). */
export interface JournalRecordReader {
  /** Throws InputFileError when the line there is no longer a record. */
  read(at: RecordPlace): JournalRecord;
  /** Idempotent. */
  close(): void;
}

/** Opens `path` on the first read, to read records again by place. */
export function openJournalRecordReader(path: string): JournalRecordReader {
  let fd: number | undefined;
  return {
    read(at) {
      fd ??= openSync(path, 'r');
      const bytes = Buffer.allocUnsafe(at.length);
      const read = readSync(fd, bytes, 0, at.length, at.offset);
      let record: JournalRecord | string | undefined;
      try {
        if (read === at.length) record = checkRecord(JSON.parse(bytes.toString('utf8')));
      } catch {}
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
