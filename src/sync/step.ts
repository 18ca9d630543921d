/** One write as the executor runs it, of any planner and kind, and the journal records it leaves. */
import type { SettledOutcome, WritePayload } from './execute.js';
import type { JournalObject, JournalOp, JournalRecord } from './journal/records.js';

/** One write, and `plan`, its planner's step; a class with every field set: one shape for 100 000. */
export class Write<P = unknown> {
  readonly object: JournalObject;
  readonly op: JournalOp;
  /** The object's key (the snapshot's name; for an update or delete, the target's). */
  readonly name: string;
  /** The name the request addresses; default `name`. */
  readonly targetName: string;
  readonly targetId: string | undefined;
  readonly sourceId: string | undefined;
  /** An earlier request of this create may have been applied: look the name up before sending. */
  readonly inDoubt: boolean;
  /** In doubt from an earlier run: when its first intent was written (for the `not ours` test). */
  readonly intentAt: string | undefined;
  /** The attempt number of the first request this run sends (default 1). */
  readonly firstAttempt: number;
  /** A create refused because someone took the name since the listing: `exists` looks it up, reports it. */
  readonly whenTaken: 'exists' | 'failure';

  constructor(
    readonly plan: P,
    fields: WriteFields,
  ) {
    this.object = fields.object;
    this.op = fields.op;
    this.name = fields.name;
    this.targetName = fields.targetName ?? fields.name;
    this.targetId = fields.targetId;
    this.sourceId = fields.sourceId;
    this.inDoubt = fields.inDoubt ?? false;
    this.intentAt = fields.intentAt;
    this.firstAttempt = fields.firstAttempt ?? 1;
    this.whenTaken = fields.whenTaken ?? 'failure';
  }
}

/** What a planner gives for a {@link Write}: object, op, name and what differs from the defaults. */
export type WriteFields = Pick<Write, 'object' | 'op' | 'name'> &
  Partial<Omit<Write, 'object' | 'op' | 'name' | 'plan'>>;

/**
 * The outcome of a write an interrupted run left in doubt and the run that finishes it finds applied
 * without a request (the object gone, equal, or there): a delete `absent`, a create found by `lookup`.
 */
export function observedOutcome<P>(
  plan: P,
  fields: WriteFields,
  targetId: string | undefined,
): SettledOutcome<P> {
  const via = fields.op === 'delete' ? 'absent' : fields.op === 'create' ? 'lookup' : 'request';
  return { kind: 'applied', step: new Write(plan, fields), targetId, via, attempts: 0 };
}

/** The intent of one request of `step`. */
export function intentRecord(
  step: Write,
  payload: WritePayload,
  run: number,
  attempt: number,
  at: string,
): JournalRecord {
  const base = {
    kind: 'intent' as const,
    run,
    object: step.object,
    name: step.name,
    targetName: step.targetName,
    targetId: step.targetId,
    sourceId: step.sourceId,
    attempt,
    at,
  };
  switch (step.op) {
    case 'create':
      return { ...base, op: 'create', image: payload.image };
    case 'update':
      return {
        ...base,
        op: 'update',
        before: payload.before ?? {},
        image: payload.image,
        secretsSent: payload.secretsSent ?? [],
      };
    default:
      return { ...base, op: 'delete', before: payload.before ?? {} };
  }
}

/** The outcome record of a settled step. */
export function outcomeRecord(outcome: SettledOutcome, run: number, at: string): JournalRecord {
  const { step } = outcome;
  const base = {
    kind: 'outcome' as const,
    run,
    object: step.object,
    name: step.name,
    targetName: step.targetName,
    at,
  };
  if (outcome.kind === 'exists') {
    const { targetId, createdAt } = outcome;
    return { ...base, op: 'create', result: 'exists', targetId, createdAt };
  }
  if (outcome.kind === 'failed') {
    return {
      ...base,
      op: step.op,
      result: 'failed',
      httpStatus: outcome.httpStatus,
      message: outcome.message,
    };
  }
  switch (step.op) {
    case 'create':
      return {
        ...base,
        op: 'create',
        result: 'created',
        targetId: outcome.targetId,
        via: outcome.via === 'lookup' ? 'lookup' : 'post',
      };
    case 'update':
      return { ...base, op: 'update', result: 'updated', targetId: outcome.targetId };
    default:
      return {
        ...base,
        op: 'delete',
        result: 'deleted',
        targetId: outcome.targetId,
        via: outcome.via === 'absent' ? 'absent' : 'request',
      };
  }
}

/** The record that withdraws `step`'s intent of `attempt`, written and never sent. */
export function withdrawnRecord(step: Write, run: number, attempt: number, at: string): JournalRecord {
  const { object, name, targetName } = step;
  return { kind: 'withdrawn', run, object, name, targetName, attempt, at };
}
