/**
 * Executing the send steps of an import plan: throttled, retrying only where a POST is safe to retry,
 * reconciling anything in doubt by name, journaled so that no connection is ever created twice.
 *
 * Per entry:
 *   intent (fsync'd) -> POST -> outcome.
 * - 2xx: created.
 * - A definite rejection (4xx other than 401/408/429): the entry failed; the service's message is kept
 *   (scrubbed). If an earlier attempt of the same entry was in doubt, the rejection may be our own
 *   earlier POST landing late ("already exists"), so the name is looked up first.
 * - 401: the run stops (exit 4).
 * - 429: certainly not applied; the shared throttle pauses (Retry-After) and slows down; resend.
 * - In doubt (no answer, reset, timeout, 5xx, 408, an HTML 502): take one retry from the run's budget,
 *   wait (full-jitter backoff), look the name up on the target; found -> created; absent -> POST again.
 * - Budget spent, or look-ups failing too: the run stops cleanly (exit 5, re-run to resume).
 * - Ctrl-C: no new request starts; requests in flight settle; exit 130.
 * In every stop, the journal stays consistent: an intent without an outcome is reconciled next time.
 */
import pLimit from 'p-limit';
import type { RetryBudget } from '../api/http.js';
import type { Connection, CreatedConnection } from '../api/types.js';
import { ApiError, AuthError, type DdsError, InterruptedError, UnavailableError } from '../errors.js';
import type { Logger } from '../log.js';
import { scrub } from '../secrets.js';
import type { Journal } from './journal.js';
import type { SendStep } from './plan.js';
import { type Clock, type RateLimiter, systemClock } from './throttle.js';

/** How the runner talks to the target (bound to one HTTP client). */
export interface ImportTarget {
  /** POST /ds_connections, one attempt (the runner decides about retries). */
  create(body: Readonly<Record<string, unknown>>): Promise<CreatedConnection>;
  /** GET by name; undefined when absent. */
  lookup(name: string, signal: AbortSignal): Promise<Connection | undefined>;
}

/** What happened to one send step. */
export type EntryOutcome =
  | {
      readonly kind: 'created';
      readonly step: SendStep;
      readonly targetId: string | undefined;
      /** `post`: the POST answered; `lookup`: found on the target after an in-doubt attempt. */
      readonly via: 'post' | 'lookup';
      readonly attempts: number;
    }
  | {
      readonly kind: 'failed';
      readonly step: SendStep;
      readonly httpStatus: number | undefined;
      readonly message: string;
    }
  | {
      /** The run stopped before this entry was settled. `inDoubt`: a POST of it may have been applied. */
      readonly kind: 'pending';
      readonly step: SendStep;
      readonly inDoubt: boolean;
    };

/** Options of {@link runImport}; every one has a documented default. */
export interface RunImportOptions {
  /** Requests in flight at once; default 4. */
  readonly concurrency?: number;
  /** Full-jitter backoff base and cap before re-checking an in-doubt POST; default 250 ms and 8 s. */
  readonly backoffBaseMs?: number;
  readonly backoffMaxMs?: number;
  /** 429s accepted for one entry before the run gives up on the service (exit 5); default 50. */
  readonly maxRateLimitedPerEntry?: number;
}

/** Everything the runner needs; injected so tests can drive it. */
export interface RunImportDeps {
  readonly target: ImportTarget;
  readonly journal: Journal;
  readonly limiter: RateLimiter;
  readonly budget: RetryBudget;
  readonly log: Logger;
  /** Ctrl-C: stop starting requests. POSTs in flight are not aborted (they settle). */
  readonly signal: AbortSignal;
  readonly clock?: Clock;
  readonly random?: () => number;
  /** Called once per settled entry (progress). */
  readonly onOutcome?: (outcome: EntryOutcome) => void;
}

/** The result of a run: one outcome per send step, and why it stopped early, if it did. */
export interface RunImportResult {
  readonly outcomes: readonly EntryOutcome[];
  /** AuthError (exit 4), InterruptedError (130) or UnavailableError (5); undefined when it ran to the end. */
  readonly stoppedBy: DdsError | undefined;
}

/** How a failed POST is treated. */
type Verdict = 'auth' | 'rate-limited' | 'rejected' | 'in-doubt';

/** Classify a POST failure by type and status (never by message text). */
export function classifyCreateFailure(error: unknown): Verdict | undefined {
  if (error instanceof AuthError) return 'auth';
  if (error instanceof ApiError) {
    if (error.status === 429) return 'rate-limited';
    return error.isTransient() ? 'in-doubt' : 'rejected';
  }
  if (error instanceof UnavailableError) return 'in-doubt';
  return undefined;
}

class StopRun extends Error {}

/** Run the send steps (see the module comment). Never throws for entry-level failures. */
export async function runImport(
  steps: readonly SendStep[],
  deps: RunImportDeps,
  options: RunImportOptions = {},
): Promise<RunImportResult> {
  const clock = deps.clock ?? systemClock;
  const random = deps.random ?? Math.random;
  const baseMs = options.backoffBaseMs ?? 250;
  const maxMs = options.backoffMaxMs ?? 8000;
  const max429 = options.maxRateLimitedPerEntry ?? 50;
  const limit = pLimit(options.concurrency ?? 4);
  const { journal, limiter, budget, target, log, signal } = deps;

  let authStop: AuthError | undefined;
  let unavailableStop: UnavailableError | undefined;
  const stopping = (): boolean => authStop !== undefined || unavailableStop !== undefined || signal.aborted;
  const now = (): string => new Date().toISOString();

  const settle = (outcome: EntryOutcome): EntryOutcome => {
    deps.onOutcome?.(outcome);
    return outcome;
  };

  /** Look a name up through the throttle; a failure stops the run (the service is not answering). */
  const lookup = async (name: string): Promise<Connection | undefined> => {
    if (stopping()) throw new StopRun();
    try {
      await limiter.acquire(signal);
      return await target.lookup(name, signal);
    } catch (error) {
      if (signal.aborted) throw new StopRun();
      if (error instanceof AuthError) authStop ??= error;
      else if (error instanceof UnavailableError || error instanceof ApiError) {
        unavailableStop ??= new UnavailableError(
          `Could not check whether '${name}' was created: ${error.message}`,
          undefined,
          {
            cause: error,
          },
        );
      } else throw error;
      throw new StopRun();
    }
  };

  const recordCreated = async (
    step: SendStep,
    targetId: string | undefined,
    via: 'post' | 'lookup',
    attempts: number,
  ) => {
    await journal.append({
      kind: 'outcome',
      result: 'created',
      name: step.name,
      targetName: step.targetName,
      targetId,
      via,
      at: now(),
    });
    return settle({ kind: 'created', step, targetId, via, attempts });
  };

  const processStep = async (step: SendStep): Promise<EntryOutcome> => {
    // An entry is in doubt when a POST of it (in this run or an earlier one) may have been applied.
    let inDoubt = step.kind === 'reconcile';
    let attempts = 0;
    let rateLimited = 0;
    try {
      if (stopping()) throw new StopRun();
      if (inDoubt) {
        const found = await lookup(step.targetName);
        if (found) return await recordCreated(step, found._id, 'lookup', attempts);
      }
      for (;;) {
        if (stopping()) throw new StopRun();
        try {
          await limiter.acquire(signal);
        } catch {
          throw new StopRun();
        }
        if (stopping()) throw new StopRun();
        attempts += 1;
        // The intent must be durable before the POST leaves: a crash after it is reconciled by name.
        await journal.append({
          kind: 'intent',
          name: step.name,
          targetName: step.targetName,
          ...(step.sourceId === undefined ? {} : { sourceId: step.sourceId }),
          attempt: attempts,
          at: now(),
        });
        let created: CreatedConnection;
        try {
          created = await target.create(step.body);
        } catch (error) {
          // Ctrl-C between the intent and the send: the client refuses to start the POST. The intent
          // stays open, so the next run looks the name up first; nothing is lost either way.
          if (error instanceof InterruptedError) throw new StopRun();
          const verdict = classifyCreateFailure(error);
          switch (verdict) {
            case 'auth':
              authStop ??= error as AuthError;
              throw new StopRun();
            case 'rate-limited':
              // Not applied. The HTTP client's onRateLimited hook has already told the throttle.
              rateLimited += 1;
              if (rateLimited > max429) {
                unavailableStop ??= new UnavailableError(
                  `The service kept answering 429 (rate limited) for '${step.targetName}' (${rateLimited} times)`,
                );
                throw new StopRun();
              }
              continue;
            case 'rejected': {
              const apiError = error as ApiError;
              if (inDoubt) {
                // Maybe our own earlier POST, applied late ("already exists"): ask before calling it failed.
                const found = await lookup(step.targetName);
                if (found) return await recordCreated(step, found._id, 'lookup', attempts);
              }
              const message = scrub(apiError.http.serviceMessage ?? apiError.message);
              await journal.append({
                kind: 'outcome',
                result: 'failed',
                name: step.name,
                targetName: step.targetName,
                httpStatus: apiError.status,
                message,
                at: now(),
              });
              return settle({ kind: 'failed', step, httpStatus: apiError.status, message });
            }
            case 'in-doubt': {
              inDoubt = true;
              log.debug(
                { entry: step.targetName, attempt: attempts, error: scrub((error as Error).message) },
                'create in doubt; will look the name up before sending again',
              );
              if (!budget.take()) {
                unavailableStop ??= new UnavailableError(
                  `The retry budget of this run is spent (last: ${(error as Error).message})`,
                  undefined,
                  { cause: error },
                );
                throw new StopRun();
              }
              const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempts - 1, 20));
              try {
                await clock.sleep(random() * ceiling, signal);
              } catch {
                throw new StopRun();
              }
              const found = await lookup(step.targetName);
              if (found) return await recordCreated(step, found._id, 'lookup', attempts);
              continue;
            }
            case undefined:
              throw error;
            default: {
              const unreachable: never = verdict;
              throw new Error(`unhandled verdict ${String(unreachable)}`);
            }
          }
        }
        return await recordCreated(step, created._id, 'post', attempts);
      }
    } catch (error) {
      if (error instanceof StopRun) return settle({ kind: 'pending', step, inDoubt });
      throw error;
    }
  };

  const outcomes = await Promise.all(steps.map((step) => limit(() => processStep(step))));
  let stoppedBy: DdsError | undefined;
  if (authStop) stoppedBy = authStop;
  else if (signal.aborted) {
    stoppedBy = new InterruptedError('Interrupted: requests in flight settled, journal flushed');
  } else if (unavailableStop) stoppedBy = unavailableStop;
  return { outcomes, stoppedBy };
}

/** A run-wide retry budget that can be enlarged once the size of the run is known. */
export interface RunBudget extends RetryBudget {
  /** Add `n` retries. */
  extend(n: number): void;
}

/** Create a {@link RunBudget} of `size` retries (shared with the HTTP client's own GET retries). */
export function createRunBudget(size: number): RunBudget {
  let remaining = size;
  return {
    take() {
      if (remaining <= 0) return false;
      remaining -= 1;
      return true;
    },
    get remaining() {
      return remaining;
    },
    extend(n) {
      remaining += n;
    },
  };
}
