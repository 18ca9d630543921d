/**
 * The journal's records: JSON Lines, append-only, one record per line, a tagged union on `kind`.
 *
 * - `begin` (first line) binds the file to one snapshot (sha256) and one target URL;
 * - `run` opens a run (an import, or an undo of an earlier run); `run-end` closes it;
 * - `intent` is made durable (fsync) BEFORE its request is sent, `outcome` is written after; an intent
 *   with no outcome is "in doubt": the next run asks the target by name before sending again.
 *
 * Intents and outcomes name the object kind (a registered kind's tag), the operation (`create`,
 * `update`, `delete`) and their run. Creates carry the masked body sent (`image`), updates and deletes
 * the masked before-image (`before`) that undo puts back. Never a credential value.
 *
 * Journals of earlier versions are read: records without `run` belong to run 1, records without
 * `object`/`op` are connection creates, `profile-intent`/`profile-outcome` are scan profile intents and
 * outcomes, `resume` is ignored.
 */
import { isRecord } from '../../own-property.js';

/** Version of the journal's record format (1: one unnamed run; 2: runs). */
export const JOURNAL_FORMAT_VERSION = 2;

/** What a journal is bound to; a run with a different snapshot or target is refused. */
export interface JournalBinding {
  readonly snapshotSha256: string;
  /** Target base URL, normalised (see `normaliseTargetUrl`). */
  readonly targetUrl: string;
}

/** First record: binds the journal. */
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
  readonly tool: string;
  readonly at: string;
}

/** A run ended: every step it planned settled (applied or failed). */
export interface RunEndRecord {
  readonly kind: 'run-end';
  readonly run: number;
  readonly at: string;
}

/** The kind of object a record is about: a registered kind's tag (`SyncKind.object`). */
export type JournalObject = string;

/** What the records ask of a kind. */
export interface JournalKind {
  readonly object: JournalObject;
  /** Its update and delete intents may lack a before-image (earlier versions wrote none). */
  readonly beforeOptional?: boolean;
}

/**
 * The registered kinds, by tag: handed in by `sync/kind.ts` (this module cannot import it: the kinds
 * import the journal). Until one is, as when a journal module is used alone, any tag is read.
 */
const kinds = new Map<JournalObject, JournalKind>();

/** Read records of these kinds (and refuse any other tag). */
export function acceptJournalKinds(accepted: Iterable<JournalKind>): void {
  for (const kind of accepted) kinds.set(kind.object, kind);
}

/** What a record's request does. */
export type JournalOp = 'create' | 'update' | 'delete';

/**
 * An image of an object as kept in a journal: server-managed fields dropped, every secret masked
 * (`"******"` when it had a value, see `connections/images.ts`). Never a credential value.
 */
export type SafeImage = Readonly<Record<string, unknown>>;

interface IntentBase {
  readonly kind: 'intent';
  /** Absent in journals of format 1 (= run 1). */
  readonly run?: number;
  readonly object: JournalObject;
  /** The object's key: the snapshot's name (for an update or delete, the target's name). */
  readonly name: string;
  /** The name the request addresses (POSTed, PUT or DELETEd). */
  readonly targetName: string;
  /** The target's id the request addresses (scan profiles are updated and deleted by id). */
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
      /** The body sent, secrets masked: what undo compares with before deleting (absent in old journals). */
      readonly image?: SafeImage;
    })
  | (IntentBase & {
      readonly op: 'update';
      /** The object before the update, secrets masked (absent in old scan profile records). */
      readonly before?: SafeImage;
      /** The body sent, secrets masked. */
      readonly image?: SafeImage;
      /** JSON pointers of the secrets the update sent in clear: undo needs their earlier values. */
      readonly secretsSent?: readonly string[];
    })
  | (IntentBase & {
      readonly op: 'delete';
      /** The object before the delete, secrets masked (absent in old scan profile records). */
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
       * `post`: this run's own request was answered with success (the object is provably this run's);
       * `lookup`: a create whose answer was lost or failed, found by name afterwards (in doubt: it may be
       * someone else's).
       */
      readonly via: 'post' | 'lookup';
    })
  | (OutcomeBase & {
      /**
       * Someone else created the name after this run listed the target: the create was refused and a
       * look-up found it, or (`createdAt` set: `not ours`) the create was in doubt and the object found
       * is older than this run's intent. Not this run's: undo leaves it (a `not ours` one, named).
       */
      readonly op: 'create';
      readonly result: 'exists';
      readonly targetId: string | undefined;
      /** The found object's `created_at`. */
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

/** Every record kind the journal holds (earlier versions' scan profile records are read as intents/outcomes). */
export type JournalRecord =
  | BeginRecord
  | ResumeRecord
  | RunRecord
  | RunEndRecord
  | IntentRecord
  | OutcomeRecord;

/** The run a record belongs to (format 1: run 1). */
export function runOf(record: { readonly run?: number }): number {
  return record.run ?? 1;
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

function isRunNumber(value: unknown): boolean {
  return value === undefined || (typeof value === 'number' && Number.isInteger(value) && value >= 1);
}

const DONE_RESULT: Readonly<Record<JournalOp, string>> = {
  create: 'created',
  update: 'updated',
  delete: 'deleted',
};

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
      const expected = DONE_RESULT[record.op as JournalOp];
      const exists = record.op === 'create' && record.result === 'exists';
      if (record.result !== expected && record.result !== 'failed' && !exists)
        return `outcome result of a ${String(record.op)} must be '${expected}' or 'failed'`;
      return record as unknown as OutcomeRecord;
    }
    case 'profile-intent':
    case 'profile-outcome':
      return readProfileRecord(value);
    default:
      return `unknown record kind ${JSON.stringify(value.kind)}`;
  }
}

/** Fill `op` and `object` of a record written before they existed (create-only journals). */
function normaliseTags(value: Record<string, unknown>): Record<string, unknown> | string {
  const op = value.op ?? 'create';
  const object = value.object ?? 'connection';
  if (op !== 'create' && op !== 'update' && op !== 'delete') return `unknown op ${JSON.stringify(op)}`;
  if (typeof object !== 'string' || (kinds.size > 0 && !kinds.has(object)))
    return `unknown object ${JSON.stringify(object)}`;
  return { ...value, op, object };
}

/** A scan profile record of format 1 (`profile-intent`, `profile-outcome`), as an intent or outcome. */
function readProfileRecord(value: Record<string, unknown>): JournalRecord | string {
  if (!isString(value.name) || !isString(value.targetName))
    return `${String(value.kind)} needs name and targetName`;
  const op = value.action;
  if (op !== 'create' && op !== 'update' && op !== 'delete')
    return `${String(value.kind)} action must be 'create', 'update' or 'delete'`;
  const targetId = isString(value.targetId) ? value.targetId : undefined;
  const base = {
    object: 'scan-profile' as const,
    name: value.name,
    targetName: value.targetName,
    at: isString(value.at) ? value.at : '',
  };
  if (value.kind === 'profile-intent') {
    const attempt = typeof value.attempt === 'number' ? value.attempt : 1;
    return { kind: 'intent', ...base, op, attempt, ...(targetId === undefined ? {} : { targetId }) };
  }
  if (value.result === 'failed') {
    return {
      kind: 'outcome',
      ...base,
      op,
      result: 'failed',
      httpStatus: typeof value.httpStatus === 'number' ? value.httpStatus : undefined,
      message: isString(value.message) ? value.message : '',
    };
  }
  if (value.result !== 'done') return "profile-outcome result must be 'done' or 'failed'";
  const via = value.via === 'lookup' ? 'lookup' : undefined;
  switch (op) {
    case 'create':
      return { kind: 'outcome', ...base, op, result: 'created', targetId, via: via ?? 'post' };
    case 'update':
      return { kind: 'outcome', ...base, op, result: 'updated', targetId };
    default:
      return { kind: 'outcome', ...base, op, result: 'deleted', targetId, via: 'request' };
  }
}
