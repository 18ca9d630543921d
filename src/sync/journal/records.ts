/**
 * The journal's records, one JSON line each (docs/files.md, "Journal and runs"). An `intent` is durable
 * BEFORE its request is sent; one with no `outcome` is in doubt: the next run asks the target by name
 * before sending again, unless it is `withdrawn` (written ahead, never sent). Never a credential value
 * (images are masked). Earlier formats are read: no `run` is run 1, no `object`/`op` a connection
 * create, `profile-intent`/`profile-outcome` a scan profile's, `resume` is ignored.
 */
import { isRecord } from '../../own-property.js';

/** Version of the journal's record format (1: one unnamed run; 2: runs; 3: `withdrawn` intents). */
export const JOURNAL_FORMAT_VERSION = 3;

/** What a journal is bound to; a run with a different snapshot or target is refused. */
export interface JournalBinding {
  readonly snapshotSha256: string;
  /** Normalised (see `normaliseTargetUrl`). */
  readonly targetUrl: string;
}

/** The first record. */
export interface BeginRecord extends JournalBinding {
  readonly kind: 'begin';
  readonly formatVersion: number;
  readonly tool: string;
  readonly at: string;
}

/** Written by earlier versions when a run picked the journal up again; ignored. */
export interface ResumeRecord {
  readonly kind: 'resume';
  readonly tool: string;
  readonly at: string;
}

/** What a run does. */
export type RunCommand = 'import' | 'undo';

/** A run begins: an import, or the undo of run `undoes`. */
export interface RunRecord {
  readonly kind: 'run';
  readonly run: number;
  readonly command: RunCommand;
  readonly undoes?: number;
  /** An undo run: whether with `--include-in-doubt` (it took back the creates of `undoes` in doubt too). */
  readonly includeInDoubt?: boolean;
  readonly tool: string;
  readonly at: string;
}

/** A run ended: every step it planned settled (applied or failed). */
export interface RunEndRecord {
  readonly kind: 'run-end';
  readonly run: number;
  readonly at: string;
}

/** A registered kind's tag (`SyncKind.object`). */
export type JournalObject = string;

/** What the records ask of a kind. */
export interface JournalKind {
  readonly object: JournalObject;
  /** Its update and delete intents may lack a before-image (earlier versions wrote none). */
  readonly beforeOptional?: boolean;
}

/**
 * The registered kinds, by tag, handed in by `sync/kind.ts` (which imports the journal, so not the
 * reverse). Until one is, as when a journal module is used alone, any tag is read.
 */
const kinds = new Map<JournalObject, JournalKind>();

/** Read records of these kinds (and refuse any other tag). */
export function acceptJournalKinds(accepted: Iterable<JournalKind>): void {
  for (const kind of accepted) kinds.set(kind.object, kind);
}

/** What a record's request does. */
export type JournalOp = 'create' | 'update' | 'delete';

/** An object as a journal keeps it: server-managed fields dropped, every secret masked. */
export type SafeImage = Readonly<Record<string, unknown>>;

interface IntentBase {
  readonly kind: 'intent';
  /** Absent in format 1 (= run 1). */
  readonly run?: number;
  readonly object: JournalObject;
  /** The object's key: the snapshot's name (an update or delete: the target's). */
  readonly name: string;
  /** The name the request addresses. */
  readonly targetName: string;
  /** Scan profiles are updated and deleted by id. */
  readonly targetId?: string;
  readonly sourceId?: string;
  /** 1 for the first request of this object in this run, 2 for a resend after an in-doubt answer, ... */
  readonly attempt: number;
  readonly at: string;
}

/** Written and fsync'd before each write request; a tagged union on `op`. */
export type IntentRecord =
  | (IntentBase & {
      readonly op: 'create';
      /** The body sent: what undo compares with before deleting (absent in old journals). */
      readonly image?: SafeImage;
    })
  | (IntentBase & {
      readonly op: 'update';
      /** Absent in old scan profile records (as a delete's). */
      readonly before?: SafeImage;
      readonly image?: SafeImage;
      /** JSON pointers of the secrets sent in clear: undo needs their earlier values. */
      readonly secretsSent?: readonly string[];
    })
  | (IntentBase & {
      readonly op: 'delete';
      readonly before?: SafeImage;
    });

interface OutcomeBase {
  readonly kind: 'outcome';
  readonly run?: number;
  readonly object: JournalObject;
  readonly name: string;
  readonly targetName: string;
  readonly at: string;
}

/** How a write ended: applied (by the answer or found by a look-up), or definitely rejected. */
export type OutcomeRecord =
  | (OutcomeBase & {
      readonly op: 'create';
      readonly result: 'created';
      readonly targetId: string | undefined;
      /**
       * `post`: this run's request was answered with success (provably this run's); `lookup`: its answer
       * was lost or failed and the name was found afterwards (in doubt: it may be someone else's).
       */
      readonly via: 'post' | 'lookup';
    })
  | (OutcomeBase & {
      /**
       * Someone else created the name after this run listed the target: the create was refused and a
       * look-up found it, or (`createdAt` set: `not ours`) the create was in doubt and the object found
       * is older than this run's intent. Undo leaves it.
       */
      readonly op: 'create';
      readonly result: 'exists';
      readonly targetId: string | undefined;
      readonly createdAt?: string;
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
      /** `request`: the DELETE answered; `absent`: the object was already gone. */
      readonly via: 'request' | 'absent';
    })
  | (OutcomeBase & {
      readonly op: JournalOp;
      readonly result: 'failed';
      readonly httpStatus: number | undefined;
      /** The service's message, scrubbed of registered secrets. */
      readonly message: string;
    });

/** The request of an intent written ahead was never sent (the run stopped first): as if not written. */
export interface WithdrawnRecord {
  readonly kind: 'withdrawn';
  readonly run: number;
  readonly object: JournalObject;
  readonly name: string;
  readonly targetName: string;
  /** The withdrawn intent's. */
  readonly attempt: number;
  readonly at: string;
}

/** Every record kind the journal holds. */
export type JournalRecord =
  | BeginRecord
  | ResumeRecord
  | RunRecord
  | RunEndRecord
  | IntentRecord
  | OutcomeRecord
  | WithdrawnRecord;

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

function isRunNumber(value: unknown): boolean {
  return value === undefined || (typeof value === 'number' && Number.isInteger(value) && value >= 1);
}

/** Check one parsed line; returns the record (earlier formats normalised) or a reason it is not one. */
export function checkRecord(value: unknown): JournalRecord | string {
  if (!isRecord(value)) return 'expected a JSON object';
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
    case 'run':
      if (!isRunNumber(value.run) || value.run === undefined) return 'run needs a run number';
      if (value.command !== 'import' && value.command !== 'undo')
        return "run command must be 'import' or 'undo'";
      if (value.command === 'undo' && !isRunNumber(value.undoes))
        return 'an undo run names the run it undoes';
      return value as unknown as RunRecord;
    case 'run-end':
      if (!isRunNumber(value.run) || value.run === undefined) return 'run-end needs a run number';
      return value as unknown as RunEndRecord;
    case 'intent':
    case 'outcome': {
      if (!isString(value.name) || !isString(value.targetName))
        return `${value.kind} needs name and targetName`;
      if (!isRunNumber(value.run)) return `${value.kind} run must be a whole number >= 1`;
      const record = normaliseTags(value);
      if (typeof record === 'string') return record;
      if (record.kind === 'intent') {
        const kind = kinds.get(record.object as JournalObject);
        if (kind?.beforeOptional !== true && record.op !== 'create' && !isRecord(record.before))
          return `${String(record.op)} intent needs a before-image`;
        return record as unknown as IntentRecord;
      }
      const expected = `${String(record.op)}d`;
      const exists = record.op === 'create' && record.result === 'exists';
      if (record.result !== expected && record.result !== 'failed' && !exists)
        return `outcome result of a ${String(record.op)} must be '${expected}' or 'failed'`;
      return record as unknown as OutcomeRecord;
    }
    case 'withdrawn':
      if (!isString(value.name) || !isString(value.targetName) || !isString(value.object))
        return 'withdrawn needs object, name and targetName';
      if (!isRunNumber(value.run) || value.run === undefined) return 'withdrawn needs a run number';
      if (kinds.size > 0 && !kinds.has(value.object)) return `unknown object ${JSON.stringify(value.object)}`;
      if (typeof value.attempt !== 'number') return 'withdrawn needs an attempt';
      return value as unknown as WithdrawnRecord;
    case 'profile-intent':
    case 'profile-outcome':
      return readProfileRecord(value);
    default:
      return `unknown record kind ${JSON.stringify(value.kind)}`;
  }
}

/** Fills `op` and `object` of a record written before they existed (create-only journals). */
function normaliseTags(value: Record<string, unknown>): Record<string, unknown> | string {
  const op = value.op ?? 'create';
  const object = value.object ?? 'connection';
  if (op !== 'create' && op !== 'update' && op !== 'delete') return `unknown op ${JSON.stringify(op)}`;
  if (typeof object !== 'string' || (kinds.size > 0 && !kinds.has(object)))
    return `unknown object ${JSON.stringify(object)}`;
  return { ...value, op, object };
}

/** A format 1 `profile-intent` or `profile-outcome`, checked as the intent or outcome it stands for. */
function readProfileRecord(value: Record<string, unknown>): JournalRecord | string {
  if (!isString(value.name) || !isString(value.targetName))
    return `${String(value.kind)} needs name and targetName`;
  const op = value.action;
  if (op !== 'create' && op !== 'update' && op !== 'delete')
    return `${String(value.kind)} action must be 'create', 'update' or 'delete'`;
  const record = { ...value, object: 'scan-profile', op, at: isString(value.at) ? value.at : '' };
  if (value.kind === 'profile-intent') {
    const attempt = typeof value.attempt === 'number' ? value.attempt : 1;
    return checkRecord({ ...record, kind: 'intent', attempt });
  }
  if (value.result === 'failed') {
    const httpStatus = typeof value.httpStatus === 'number' ? value.httpStatus : undefined;
    const message = isString(value.message) ? value.message : '';
    return checkRecord({ ...record, kind: 'outcome', httpStatus, message });
  }
  if (value.result !== 'done') return "profile-outcome result must be 'done' or 'failed'";
  const via = op === 'create' ? (value.via === 'lookup' ? 'lookup' : 'post') : 'request';
  return checkRecord({ ...record, kind: 'outcome', result: `${op}d`, via });
}
