/**
 * The journal records the executor writes: the intent of a request (before it is sent) and the
 * outcome of a step (after it settled).
 */
import type { SettledOutcome, WritePayload, WriteStep } from './execute.js';
import type { JournalRecord } from './journal/records.js';

/** The intent of one request of `step`. */
export function intentRecord(
  step: WriteStep,
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
    ...(step.targetId === undefined ? {} : { targetId: step.targetId }),
    ...(step.sourceId === undefined ? {} : { sourceId: step.sourceId }),
    attempt,
    at,
  };
  switch (step.op) {
    case 'create':
      return { ...base, op: 'create', ...(payload.image === undefined ? {} : { image: payload.image }) };
    case 'update':
      return {
        ...base,
        op: 'update',
        before: payload.before ?? {},
        ...(payload.image === undefined ? {} : { image: payload.image }),
        secretsSent: payload.secretsSent ?? [],
      };
    default:
      return { ...base, op: 'delete', before: payload.before ?? {} };
  }
}

/** The outcome record of a settled step (a step refused when loaded is recorded `failed`). */
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
    return {
      ...base,
      op: 'create',
      result: 'exists',
      targetId,
      ...(createdAt === undefined ? {} : { createdAt }),
    };
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
