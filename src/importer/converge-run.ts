/**
 * The runner of an import's updates (PUT) and deletes (DELETE), journaled like creates:
 *
 *   intent (fsync'd, with the masked before-image) -> request -> outcome.
 *
 * Both requests are idempotent, so the client retries them itself on a transient failure (429 after
 * its Retry-After, 5xx, a dropped connection). A DELETE answered "no such connection" after a retry, or
 * for a name already gone, is done (an earlier attempt deleted it). A definite rejection (4xx) fails
 * the entry with the service's message. When the retries are spent the run stops (exit 5) with the
 * intent left in doubt: the next run lists the target again, finds the delete applied (the name is
 * absent) or not, and repeats an update whose fields still differ; the first before-image in the
 * journal stays the one undo restores. 401 stops the run (exit 4); Ctrl-C stops it (130) once the
 * requests in flight settle.
 */
import type { ByNameResult } from '../api/connections.js';
import { ApiError, AuthError, type DdsError, InterruptedError, UnavailableError } from '../errors.js';
import type { Connection } from '../model/connection.js';
import { scrub } from '../secrets.js';
import type { Journal } from './journal.js';
import { forEachLimited } from './limited.js';
import type { ChangeStep } from './plan.js';
import type { RateLimiter } from './throttle.js';

/** How the runner talks to the target (bound to one HTTP client). */
export interface ChangeTarget {
  update(
    name: string,
    body: Readonly<Record<string, unknown>>,
    signal: AbortSignal,
  ): Promise<ByNameResult<Connection | undefined>>;
  remove(name: string, signal: AbortSignal): Promise<ByNameResult<undefined>>;
}

/** What happened to one update or delete. */
export type ChangeOutcome =
  | { readonly kind: 'updated'; readonly step: ChangeStep }
  | { readonly kind: 'deleted'; readonly step: ChangeStep; readonly via: 'request' | 'absent' }
  | {
      readonly kind: 'failed';
      readonly step: ChangeStep;
      readonly httpStatus: number | undefined;
      readonly message: string;
    }
  | { readonly kind: 'pending'; readonly step: ChangeStep; readonly inDoubt: boolean };

/** Everything {@link runChanges} needs. */
export interface RunChangesDeps {
  readonly target: ChangeTarget;
  readonly journal: Journal;
  readonly limiter: RateLimiter;
  readonly signal: AbortSignal;
  readonly concurrency: number;
  /** Called once per settled step (progress). */
  readonly onOutcome?: (outcome: ChangeOutcome) => void;
}

/** The outcomes, and why the run stopped early, if it did. */
export interface RunChangesResult {
  readonly outcomes: readonly ChangeOutcome[];
  readonly stoppedBy: DdsError | undefined;
}

class StopRun extends Error {}

/** Run the update and delete steps (see the module comment). Never throws for entry-level failures. */
export async function runChanges(
  steps: readonly ChangeStep[],
  deps: RunChangesDeps,
): Promise<RunChangesResult> {
  const { journal, limiter, target, signal } = deps;
  let stoppedBy: DdsError | undefined;
  let fatal: { readonly error: unknown } | undefined;
  const halt = new AbortController();
  const waitSignal = AbortSignal.any([signal, halt.signal]);
  const now = (): string => new Date().toISOString();
  const stop = (reason: DdsError): StopRun => {
    stoppedBy ??= reason;
    halt.abort();
    return new StopRun();
  };
  const checkGoing = (): void => {
    if (signal.aborted)
      throw stop(new InterruptedError('Interrupted: requests in flight settled, journal flushed'));
    if (stoppedBy !== undefined || fatal !== undefined) throw new StopRun();
  };

  const settle = async (outcome: ChangeOutcome): Promise<ChangeOutcome> => {
    const { step } = outcome;
    const base = {
      kind: 'outcome',
      object: 'connection',
      name: step.name,
      targetName: step.targetName,
      at: now(),
    } as const;
    if (outcome.kind === 'updated') {
      await journal.append({ ...base, op: 'update', result: 'updated', targetId: step.targetId });
    } else if (outcome.kind === 'deleted') {
      await journal.append({
        ...base,
        op: 'delete',
        result: 'deleted',
        targetId: step.targetId,
        via: outcome.via,
      });
    } else if (outcome.kind === 'failed') {
      await journal.append({
        ...base,
        op: step.kind,
        result: 'failed',
        httpStatus: outcome.httpStatus,
        message: outcome.message,
      });
    }
    deps.onOutcome?.(outcome);
    return outcome;
  };

  const runStep = async (step: ChangeStep, state: { sent: boolean }): Promise<ChangeOutcome> => {
    checkGoing();
    try {
      await limiter.acquire(waitSignal);
    } catch (error) {
      if (waitSignal.aborted) throw new StopRun();
      throw error;
    }
    checkGoing();
    const intentBase = {
      kind: 'intent',
      object: 'connection',
      name: step.name,
      targetName: step.targetName,
      attempt: 1,
      at: now(),
      ...(step.sourceId === undefined ? {} : { sourceId: step.sourceId }),
    } as const;
    // An update's body is prepared now (read again from the snapshot), held only while in flight.
    const update = step.kind === 'update' ? step.source.load() : undefined;
    if (update !== undefined) {
      await journal.append({
        ...intentBase,
        op: 'update',
        before: step.before.load(),
        image: update.image,
        secretsSent: update.secretsSent,
      });
    } else {
      await journal.append({ ...intentBase, op: 'delete', before: step.before.load() });
    }
    checkGoing();
    state.sent = true;
    try {
      if (update !== undefined) {
        const answer = await target.update(step.targetName, update.body, signal);
        if (answer.kind === 'absent') {
          return settle({
            kind: 'failed',
            step,
            httpStatus: undefined,
            message: 'no longer in the target (deleted meanwhile); re-run to create it',
          });
        }
        return settle({ kind: 'updated', step });
      }
      const answer = await target.remove(step.targetName, signal);
      return settle({ kind: 'deleted', step, via: answer.kind === 'absent' ? 'absent' : 'request' });
    } catch (error) {
      if (error instanceof AuthError) throw stop(error);
      if (error instanceof InterruptedError || signal.aborted)
        throw stop(new InterruptedError('Interrupted: requests in flight settled, journal flushed'));
      if (error instanceof ApiError && !error.isTransient() && error.status !== 429) {
        return settle({
          kind: 'failed',
          step,
          httpStatus: error.status,
          message: scrub(error.http.serviceMessage ?? error.message),
        });
      }
      if (error instanceof ApiError || error instanceof UnavailableError) {
        throw stop(
          new UnavailableError(
            `Could not ${step.kind} '${step.targetName}': ${scrub(error.message)}; re-run to resume`,
            undefined,
            { cause: error },
          ),
        );
      }
      throw error;
    }
  };

  const processStep = async (step: ChangeStep): Promise<ChangeOutcome> => {
    const state = { sent: false };
    try {
      return await runStep(step, state);
    } catch (error) {
      if (!(error instanceof StopRun)) {
        fatal ??= { error };
        halt.abort();
      }
      return { kind: 'pending', step, inDoubt: state.sent };
    }
  };

  // processStep never rejects.
  const outcomes = new Array<ChangeOutcome>(steps.length);
  await forEachLimited(steps, deps.concurrency, async (step, i) => {
    outcomes[i] = await processStep(step);
  });
  if (fatal) throw fatal.error;
  if (stoppedBy === undefined && outcomes.some((o) => o.kind === 'pending'))
    stoppedBy = new UnavailableError('The run stopped before every change was settled');
  return { outcomes, stoppedBy };
}
