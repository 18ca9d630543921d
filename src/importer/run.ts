/**
 * Executing the send steps of an import plan: throttled, retrying only where a POST is safe to retry,
 * reconciling anything in doubt by name, journaled so that no connection is ever created twice.
 *
 * Per entry:
 *   intent (fsync'd) -> POST -> outcome.
 * The intent of the entry that will take a slot next is written while the slot's POST is in flight
 * (its fsync is then off the path between an answer and the next POST); a run that stops before that
 * entry is sent leaves its intent open, which costs the next run one look-up.
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
 * - Anything unexpected (a journal write failing, a bug): the run stops the same way, then rethrows it.
 * Every stop is run-wide and prompt: waits (throttle, backoff) end at once, no new request starts, and
 * a POST already sent settles and is journaled. The journal stays consistent: an intent without an
 * outcome is reconciled next time. A run never ends with an unsettled entry and no `stoppedBy`.
 */
import { setMaxListeners } from 'node:events';
import type { RetryBudget } from '../api/http.js';
import { computeFullJitter } from '../api/retry-policy.js';
import type { CreatedConnection } from '../api/types.js';
import { ApiError, AuthError, type DdsError, InterruptedError, UnavailableError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Connection } from '../model/connection.js';
import { scrub } from '../secrets.js';
import type { Journal, JournalRecord } from './journal.js';
import { forEachLimited } from './limited.js';
import type { SendBody, SendStep } from './plan.js';
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
  /** Called once per settled entry, created or failed (progress); not for entries left pending. */
  readonly onOutcome?: (outcome: EntryOutcome) => void;
}

/** The result of a run: one outcome per send step, and why it stopped early, if it did. */
export interface RunImportResult {
  readonly outcomes: readonly EntryOutcome[];
  /**
   * AuthError (exit 4), InterruptedError (130) or UnavailableError (5); undefined when it ran to the end.
   * Always set when an outcome is `pending`.
   */
  readonly stoppedBy: DdsError | undefined;
}

/** How a failed POST is treated. */
type Verdict = 'auth' | 'interrupted' | 'rate-limited' | 'rejected' | 'in-doubt';

/** Classify a POST failure by type and status (never by message text). */
export function classifyCreateFailure(error: unknown): Verdict | undefined {
  if (error instanceof AuthError) return 'auth';
  // The client refuses to start a request once Ctrl-C was pressed: nothing was sent.
  if (error instanceof InterruptedError) return 'interrupted';
  if (error instanceof ApiError) {
    if (error.status === 429) return 'rate-limited';
    return error.isTransient() ? 'in-doubt' : 'rejected';
  }
  // Also when `inDoubt` is false (connection refused): looking up costs one GET, guessing wrong a duplicate.
  if (error instanceof UnavailableError) return 'in-doubt';
  return undefined;
}

/** Thrown inside a step to leave it pending; the reason of the stop is recorded before. */
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
  const concurrency = options.concurrency ?? 4;
  const { journal, limiter, budget, target, log, signal } = deps;

  // Why the run stops early; the first reason of each kind is kept.
  let authStop: AuthError | undefined;
  let unavailableStop: UnavailableError | undefined;
  let interrupted = false;
  let fatal: { readonly error: unknown } | undefined;
  // Ends every wait of every step as soon as any step stops the run (not only on Ctrl-C), so that a
  // step sleeping in its backoff does not wake up seconds later and send one more request.
  const halt = new AbortController();
  const waitSignal = AbortSignal.any([signal, halt.signal]);
  // Every step in flight waits on it at once (throttle, backoff): not a leak, so no warning past 10.
  setMaxListeners(concurrency + 10, waitSignal);
  const stopping = (): boolean =>
    authStop !== undefined ||
    unavailableStop !== undefined ||
    interrupted ||
    fatal !== undefined ||
    signal.aborted;
  const stopWith = (reason: AuthError | UnavailableError | 'interrupted'): StopRun => {
    if (reason === 'interrupted') interrupted = true;
    else if (reason instanceof AuthError) authStop ??= reason;
    else unavailableStop ??= reason;
    halt.abort();
    return new StopRun();
  };
  const checkGoing = (): void => {
    if (stopping()) throw new StopRun();
  };
  /** Await a throttle or backoff wait; its rejection by a stop leaves the step pending. */
  const waitFor = async (wait: Promise<unknown>): Promise<void> => {
    try {
      await wait;
    } catch (error) {
      if (waitSignal.aborted) throw new StopRun();
      throw error;
    }
  };
  const now = (): string => new Date().toISOString();

  /** Look a name up through the throttle; a failure stops the run (the service is not answering). */
  const lookup = async (name: string): Promise<Connection | undefined> => {
    checkGoing();
    await waitFor(limiter.acquire(waitSignal));
    checkGoing();
    try {
      // The user's signal, not `waitSignal`: a look-up already sent may still settle its entry.
      return await target.lookup(name, signal);
    } catch (error) {
      if (error instanceof InterruptedError || signal.aborted) throw stopWith('interrupted');
      if (error instanceof AuthError) throw stopWith(error);
      if (error instanceof UnavailableError || error instanceof ApiError) {
        throw stopWith(
          new UnavailableError(`Could not check whether '${name}' was created: ${error.message}`, undefined, {
            cause: error,
          }),
        );
      }
      throw error;
    }
  };

  // Outcome records are written without holding a slot: the next entry's POST does not wait for this
  // entry's fsync. Safe: an outcome lost in a crash leaves its intent open, and the next run looks the
  // name up before sending anything (reconcile). A failed write stops the run like any other fault.
  const outcomeWrites = new Set<Promise<void>>();
  const recordOutcome = (outcome: EntryOutcome, record: JournalRecord): EntryOutcome => {
    const written: Promise<void> = journal.append(record).then(
      () => {
        outcomeWrites.delete(written);
        deps.onOutcome?.(outcome);
      },
      (error: unknown) => {
        outcomeWrites.delete(written);
        fatal ??= { error };
        halt.abort();
      },
    );
    outcomeWrites.add(written);
    return outcome;
  };

  const recordCreated = (
    step: SendStep,
    targetId: string | undefined,
    via: 'post' | 'lookup',
    attempts: number,
  ): EntryOutcome =>
    recordOutcome(
      { kind: 'created', step, targetId, via, attempts },
      {
        kind: 'outcome',
        object: 'connection',
        op: 'create',
        result: 'created',
        name: step.name,
        targetName: step.targetName,
        targetId,
        via,
        at: now(),
      },
    );

  const recordFailed = (step: SendStep, error: ApiError): EntryOutcome => {
    const message = scrub(error.http.serviceMessage ?? error.message);
    return recordOutcome(
      { kind: 'failed', step, httpStatus: error.status, message },
      {
        kind: 'outcome',
        object: 'connection',
        op: 'create',
        result: 'failed',
        name: step.name,
        targetName: step.targetName,
        httpStatus: error.status,
        message,
        at: now(),
      },
    );
  };

  /** The intent record of a create attempt. */
  const intentOf = (step: SendStep, image: SendBody['image'], attempt: number): JournalRecord => ({
    kind: 'intent',
    object: 'connection',
    op: 'create',
    name: step.name,
    targetName: step.targetName,
    ...(step.sourceId === undefined ? {} : { sourceId: step.sourceId }),
    ...(image === undefined ? {} : { image }),
    attempt,
    at: now(),
  });

  // Intents written ahead (see the module comment): for at most `concurrency` steps not started yet,
  // each with the body it was written from. Steps start in their order (the limiter is first in, first
  // out), so the next ones to start are those from `started`. A failed write stops the run as an
  // outcome's does, also when its step never starts.
  const early = new Map<SendStep, { readonly body: SendBody; readonly written: Promise<void> }>();
  const earlyWrites = new Set<Promise<void>>();
  let started = 0;
  let nextEarly = 0;
  const writeNextIntentEarly = (): void => {
    const index = Math.max(nextEarly, started);
    if (index >= steps.length || index - started >= concurrency || stopping()) return;
    nextEarly = index + 1;
    const step = steps[index] as SendStep;
    // An entry in doubt is looked up before anything is written for it.
    if (step.kind === 'reconcile') return;
    let body: SendBody;
    try {
      body = step.source.load();
    } catch {
      // Called beside another entry's POST: the step meets the same failure itself, as its own.
      return;
    }
    const written: Promise<void> = journal.append(intentOf(step, body.image, 1));
    const watched = written.then(
      () => {
        earlyWrites.delete(watched);
      },
      (error: unknown) => {
        earlyWrites.delete(watched);
        fatal ??= { error };
        halt.abort();
      },
    );
    earlyWrites.add(watched);
    early.set(step, { body, written });
  };

  /** Per-step state that outlives a stop (for the pending outcome). */
  interface StepState {
    /** A POST of this entry (in this run or an earlier one) may have been applied. */
    inDoubt: boolean;
    attempts: number;
  }

  const sendStep = async (step: SendStep, state: StepState): Promise<EntryOutcome> => {
    checkGoing();
    if (state.inDoubt) {
      const found = await lookup(step.targetName);
      if (found) return recordCreated(step, found._id, 'lookup', state.attempts);
    }
    let rateLimited = 0;
    // Prepared now (read from the snapshot again), or when its intent was written early; held only
    // while this entry is in flight.
    const ahead = early.get(step);
    early.delete(step);
    const { body, image } = ahead?.body ?? step.source.load();
    for (;;) {
      checkGoing();
      // The send time goes with a 429 answer to the throttle: its once-per-epoch rule needs it.
      let sentAt = 0;
      await waitFor(
        limiter.acquire(waitSignal).then((at) => {
          sentAt = at;
        }),
      );
      checkGoing();
      state.attempts += 1;
      // The intent must be durable before the POST leaves: a crash after it is reconciled by name.
      // The first attempt's may have been written early (then only its fsync is waited for).
      if (state.attempts === 1 && ahead !== undefined) await ahead.written;
      else await journal.append(intentOf(step, image, state.attempts));
      // A stop that came during the fsync still prevents the POST; the open intent costs one look-up.
      checkGoing();
      let created: CreatedConnection;
      try {
        const answer = target.create(body);
        writeNextIntentEarly();
        created = await answer;
      } catch (error) {
        const verdict = classifyCreateFailure(error);
        switch (verdict) {
          case 'auth':
            throw stopWith(error as AuthError);
          case 'interrupted':
            throw stopWith('interrupted');
          case 'rate-limited':
            // Certainly not applied, so no look-up and no retry from the budget. The throttle pauses
            // (Retry-After) and slows down, once per epoch: a 429 to a POST sent before its last
            // decrease says nothing new. (The client's onRateLimited hook reports only the requests
            // it retries itself, so this 429 is reported once, here, with its send time.)
            limiter.onRateLimited((error as ApiError).retryAfterMs, sentAt);
            rateLimited += 1;
            if (rateLimited > max429) {
              throw stopWith(
                new UnavailableError(
                  `The service kept answering 429 (rate limited) for '${step.targetName}' (${rateLimited} times)`,
                ),
              );
            }
            continue;
          case 'rejected':
            if (state.inDoubt) {
              // Maybe our own earlier POST, applied late ("already exists"): ask before calling it failed.
              const found = await lookup(step.targetName);
              if (found) return recordCreated(step, found._id, 'lookup', state.attempts);
            }
            return recordFailed(step, error as ApiError);
          case 'in-doubt': {
            state.inDoubt = true;
            log.debug(
              { entry: step.targetName, attempt: state.attempts, error: scrub((error as Error).message) },
              'create in doubt; will look the name up before sending again',
            );
            if (!budget.take()) {
              throw stopWith(
                new UnavailableError(
                  `The retry budget of this run is spent (last: ${(error as Error).message})`,
                  undefined,
                  { cause: error },
                ),
              );
            }
            await waitFor(
              clock.sleep(computeFullJitter(baseMs, maxMs, state.attempts - 1, random), waitSignal),
            );
            const found = await lookup(step.targetName);
            if (found) return recordCreated(step, found._id, 'lookup', state.attempts);
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
      return recordCreated(step, created._id, 'post', state.attempts);
    }
  };

  const processStep = async (step: SendStep): Promise<EntryOutcome> => {
    started += 1;
    const state: StepState = { inDoubt: step.kind === 'reconcile', attempts: 0 };
    try {
      return await sendStep(step, state);
    } catch (error) {
      if (!(error instanceof StopRun)) {
        // Stop the other steps as for any stop (they settle, nothing new starts), then rethrow below.
        fatal ??= { error };
        halt.abort();
      }
      return { kind: 'pending', step, inDoubt: state.inDoubt };
    }
  };

  // processStep never rejects.
  const outcomes = new Array<EntryOutcome>(steps.length);
  await forEachLimited(steps, concurrency, async (step, i) => {
    outcomes[i] = await processStep(step);
  });
  // Every outcome record, and every intent written early, on disk (or its failure known) before the
  // run reports.
  while (outcomeWrites.size > 0 || earlyWrites.size > 0)
    await Promise.all([...outcomeWrites, ...earlyWrites]);
  if (fatal) throw fatal.error;
  let stoppedBy: DdsError | undefined;
  if (authStop) stoppedBy = authStop;
  else if (interrupted || signal.aborted) {
    stoppedBy = new InterruptedError('Interrupted: requests in flight settled, journal flushed');
  } else if (unavailableStop) stoppedBy = unavailableStop;
  else if (outcomes.some((o) => o.kind === 'pending')) {
    // Not reachable by design (every StopRun records its reason); never let a run look complete.
    stoppedBy = new UnavailableError('The run stopped before every entry was settled');
  }
  return { outcomes, stoppedBy };
}
