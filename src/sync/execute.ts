/**
 * The executor, the only code that writes to a target (import and undo, every kind). Per step:
 * throttle -> intent (fsync'd; a step's first usually written ahead, while a request before it is out)
 * -> request -> outcome.
 * - 2xx: applied (`via: 'post'` for a create: provably this run's).
 * - 429: certainly not applied; the shared throttle pauses (Retry-After) and slows down once per epoch;
 *   the same request goes again, at most `maxRateLimitedPerStep` times.
 * - A definite rejection (4xx but 401/408/429): failed, with the service's message scrubbed. A create
 *   in doubt is looked up first: the rejection may answer our own earlier request ("already exists").
 * - In doubt (no answer, reset, timeout, 5xx, 408): a create takes one retry from the run's budget,
 *   waits (full jitter) and looks the name up: found -> applied `via: 'lookup'` (in doubt whose it is),
 *   or `not ours` when created before this run's intent (`ownership.ts`); absent -> sent again. An
 *   update or delete was retried by the HTTP client already (idempotent): the run stops (exit 5) with
 *   the intent open, and the next run plans it afresh.
 * - 401: stop (exit 4). Ctrl-C: stop (exit 130). Budget spent or look-ups failing: stop (exit 5).
 * A stop is run-wide and prompt: waits end, no new request starts, a request already sent settles and
 * is journaled; an intent never sent is `withdrawn`; one left without an outcome is reconciled by the
 * next run.
 */
import { setMaxListeners } from 'node:events';
import type { RetryBudget } from '../api/retry-policy.js';
import { computeFullJitter } from '../api/retry-policy.js';
import { ApiError, AuthError, type DdsError, InterruptedError, UnavailableError } from '../errors.js';
import type { Logger } from '../log.js';
import { scrub } from '../secrets.js';
import type { JournalObject, JournalRecord, SafeImage } from './journal/records.js';
import type { Journal } from './journal/writer.js';
import { forEachLimited } from './limited.js';
import { notOursReason, notOursStamp } from './ownership.js';
import { intentRecord, outcomeRecord, type Write, withdrawnRecord } from './step.js';
import { type Clock, type RateLimiter, systemClock } from './throttle.js';

/** The object a request addresses in the target. */
export type WriteTarget = Pick<Write, 'targetName' | 'targetId'>;

/** How the executor writes one kind of object (bound to one HTTP client); see `kinds/`. */
export interface KindWriter {
  /**
   * Create, one attempt (the executor decides about retries); the new object's id. A write takes no
   * signal: once sent, Ctrl-C lets it settle, and its outcome is journaled.
   */
  create(body: Readonly<Record<string, unknown>>): Promise<string | undefined>;
  update(target: WriteTarget, body: Readonly<Record<string, unknown>>): Promise<Sent>;
  remove(target: WriteTarget): Promise<Sent>;
  /** Find an object by the name it was created under; undefined when absent. */
  lookup(name: string, signal: AbortSignal): Promise<Found | undefined>;
}

/** How an update or a delete was answered: `absent`, the object was not there. */
export type Sent = { readonly kind: 'done' | 'absent' };

/** An object a look-up found: its id, and its `created_at` as the service gave it (any type). */
export interface Found {
  readonly id: string | undefined;
  readonly createdAt?: unknown;
}

/** What a step sends, prepared when it is sent (a plan of many steps holds no bodies). */
export interface WritePayload {
  readonly body?: Readonly<Record<string, unknown>>;
  /** The body with every secret masked (journaled with the intent). */
  readonly image?: SafeImage;
  /** The object before the write, secrets masked (undo puts it back). */
  readonly before?: SafeImage;
  /** JSON pointers of the secrets the body sends in clear. */
  readonly secretsSent?: readonly string[];
}

/** Thrown by {@link ExecuteOptions.load} when the step cannot be sent as planned: it fails, nothing is sent. */
export class StepRefused extends Error {}

/** What happened to one step. */
export type WriteOutcome<P = unknown> =
  | {
      readonly kind: 'applied';
      readonly step: Write<P>;
      readonly targetId: string | undefined;
      /** `lookup`: a create found by name after its answer was lost; `absent`: a delete found it gone. */
      readonly via: 'post' | 'lookup' | 'request' | 'absent';
      /** Requests of this step sent by this run (0: found by a look-up before any). */
      readonly attempts: number;
    }
  | {
      /** Someone else's ({@link Write.whenTaken}); `createdAt` set: `not ours`, created before the intent. */
      readonly kind: 'exists';
      readonly step: Write<P>;
      readonly targetId: string | undefined;
      readonly createdAt?: string;
    }
  | {
      readonly kind: 'failed';
      readonly step: Write<P>;
      readonly httpStatus: number | undefined;
      readonly message: string;
    }
  | {
      /** The run stopped before this step settled. `inDoubt`: a request of it may have been applied. */
      readonly kind: 'pending';
      readonly step: Write<P>;
      readonly inDoubt: boolean;
    };

/** An outcome the journal records: every one but `pending`. */
export type SettledOutcome<P = unknown> = Exclude<WriteOutcome<P>, { kind: 'pending' }>;

/** Full-jitter backoff before re-checking an in-doubt create (ms). */
const BACKOFF_BASE_MS = 250;
const BACKOFF_MAX_MS = 8000;

/** Options of one {@link executeSteps} call. */
export interface ExecuteOptions<P> {
  /** The payload of a step, prepared from its plan when it is sent; may throw {@link StepRefused}. */
  readonly load: (step: Write<P>) => WritePayload;
  /** Requests in flight at once; default 4. */
  readonly concurrency?: number;
  /** 429s accepted for one step before the run gives up on the service (exit 5); default 50. */
  readonly maxRateLimitedPerStep?: number;
  /** Called once per settled step (applied or failed; not for steps left pending). */
  readonly onOutcome?: (outcome: WriteOutcome<P>) => void;
}

/** Everything the executor needs for a run; injected so tests can drive it. */
export interface ExecuteDeps {
  readonly writers: Readonly<Partial<Record<JournalObject, KindWriter>>>;
  readonly journal: Pick<Journal, 'append'>;
  readonly run: number;
  readonly limiter: RateLimiter;
  readonly budget: RetryBudget;
  readonly log?: Logger;
  /** Ctrl-C: stop starting requests. Requests in flight are not aborted (they settle). */
  readonly signal: AbortSignal;
  readonly clock?: Clock;
  readonly random?: () => number;
}

/** One outcome per step (same order), and why the run stopped early, if it did. */
export interface ExecuteResult<P> {
  readonly outcomes: readonly WriteOutcome<P>[];
  /** AuthError, InterruptedError or UnavailableError; always set when an outcome is `pending`. */
  readonly stoppedBy: DdsError | undefined;
}

/** An intent written whose request has not left. */
type Unsent = {
  readonly payload: WritePayload;
  readonly at: string;
  readonly attempt: number;
  readonly written: Promise<void>;
};

/** Thrown inside a step to leave it pending; the reason of the stop is recorded before. */
class StopRun extends Error {}

/** Per-step state that outlives a stop (for the pending outcome). */
interface StepState {
  inDoubt: boolean;
  attempts: number;
  /** A request of it was sent by this run. */
  sent: boolean;
  /** When the step's first intent was written (ms): the `not ours` test. */
  firstIntentMs?: number;
}

const INTERRUPTED = 'Interrupted: requests in flight settled, journal flushed';

/** Run the steps (see the module comment). Never throws for a step's failure. */
export async function executeSteps<P>(
  steps: readonly Write<P>[],
  deps: ExecuteDeps,
  options: ExecuteOptions<P>,
): Promise<ExecuteResult<P>> {
  const clock = deps.clock ?? systemClock;
  const random = deps.random ?? Math.random;
  const max429 = options.maxRateLimitedPerStep ?? 50;
  const concurrency = options.concurrency ?? 4;
  const { journal, limiter, budget, signal, run } = deps;

  let stopReason: DdsError | undefined;
  let fatal: { readonly error: unknown } | undefined;
  // Ends every wait of every step as soon as any step stops the run (not only on Ctrl-C).
  const halt = new AbortController();
  const waitSignal = AbortSignal.any([signal, halt.signal]);
  // Every step in flight waits on it at once (throttle, backoff): not a leak, so no warning past 10.
  setMaxListeners(concurrency + 10, waitSignal);
  const stopping = (): boolean => stopReason !== undefined || fatal !== undefined || signal.aborted;
  const stopWith = (reason: DdsError): StopRun => {
    stopReason ??= reason;
    halt.abort();
    return new StopRun();
  };
  const checkGoing = (): void => {
    if (signal.aborted) throw stopWith(new InterruptedError(INTERRUPTED));
    if (stopping()) throw new StopRun();
  };
  // A wait ended by a stop leaves the step pending.
  const waitFor = async <T>(wait: Promise<T>): Promise<T> => {
    try {
      return await wait;
    } catch (error) {
      if (waitSignal.aborted) throw new StopRun();
      throw error;
    }
  };
  const now = (): string => new Date().toISOString();
  const writerOf = (step: Write<P>): KindWriter => {
    const writer = deps.writers[step.object];
    if (writer === undefined) throw new Error(`no writer for ${step.object}`);
    return writer;
  };

  // A look-up that fails stops the run: the service is not answering.
  const lookup = async (step: Write<P>): Promise<Found | undefined> => {
    checkGoing();
    await waitFor(limiter.acquire(waitSignal));
    checkGoing();
    try {
      // The user's signal, not `waitSignal`: a look-up already sent may still settle its step.
      return await writerOf(step).lookup(step.targetName, signal);
    } catch (error) {
      if (error instanceof InterruptedError || signal.aborted)
        throw stopWith(new InterruptedError(INTERRUPTED));
      if (error instanceof AuthError) throw stopWith(error);
      if (error instanceof UnavailableError || error instanceof ApiError) {
        throw stopWith(
          new UnavailableError(
            `Could not check whether '${step.targetName}' was created: ${scrub(error.message)}`,
            undefined,
            { cause: error },
          ),
        );
      }
      throw error;
    }
  };

  // Outcome records are not awaited by the step's slot nor synced on their own (the next intent's sync
  // or the journal's close takes them to disk): one lost in a crash leaves its intent open, and the next
  // run looks the name up before sending anything. A failed write stops the run.
  const outcomeWrites = new Set<Promise<void>>();
  const appendUnsynced = (record: JournalRecord, onWritten?: () => void): void => {
    const written: Promise<void> = journal.append(record).then(
      () => {
        outcomeWrites.delete(written);
        onWritten?.();
      },
      (error: unknown) => {
        outcomeWrites.delete(written);
        fatal ??= { error };
        halt.abort();
      },
    );
    outcomeWrites.add(written);
  };
  const settle = (outcome: SettledOutcome<P>): WriteOutcome<P> => {
    appendUnsynced(outcomeRecord(outcome, run, now()), () => options.onOutcome?.(outcome));
    return outcome;
  };

  // Intents written whose request has not left: a step's first (not after a request of it, nor in doubt)
  // is withdrawn if the run stops first. The next step's is written ahead, while a request is out, so
  // its sync is not between an answer and the next request (docs/why.md, "...written synchronously").
  const unsent = new Map<Write<P>, Unsent>();
  let begun = 0;
  let nextAhead = 0;
  const writeAhead = (): void => {
    if (stopping() || unsent.size >= concurrency) return;
    for (nextAhead = Math.max(nextAhead, begun); nextAhead < steps.length; ) {
      const step = steps[nextAhead++] as Write<P>;
      if (step.inDoubt) continue;
      let payload: WritePayload;
      try {
        payload = options.load(step);
      } catch {
        continue; // the step fails (or throws) itself when it runs
      }
      const at = now();
      const written = journal.append(intentRecord(step, payload, run, step.firstAttempt, at));
      written.catch(() => undefined); // awaited by the step
      unsent.set(step, { payload, at, attempt: step.firstAttempt, written });
      return;
    }
  };
  const applied = (
    step: Write<P>,
    state: StepState,
    targetId: string | undefined,
    via: 'post' | 'lookup' | 'request' | 'absent',
  ) => settle({ kind: 'applied', step, targetId, via, attempts: state.attempts });
  const failed = (step: Write<P>, httpStatus: number | undefined, message: string) =>
    settle({ kind: 'failed', step, httpStatus, message: scrub(message) });
  const foundInDoubt = (step: Write<P>, state: StepState, found: Found) => {
    const createdAt = notOursStamp(found.createdAt, state.firstIntentMs);
    if (createdAt === undefined) return applied(step, state, found.id, 'lookup');
    if (step.whenTaken === 'exists') return settle({ kind: 'exists', step, targetId: found.id, createdAt });
    return failed(step, undefined, notOursReason(createdAt));
  };

  const send = async (step: Write<P>, payload: WritePayload): Promise<string | undefined | 'absent'> => {
    const writer = writerOf(step);
    if (step.op === 'create') return writer.create(payload.body ?? {});
    const answer =
      step.op === 'update' ? await writer.update(step, payload.body ?? {}) : await writer.remove(step);
    return answer.kind === 'absent' ? 'absent' : step.targetId;
  };

  const runStep = async (step: Write<P>, state: StepState): Promise<WriteOutcome<P>> => {
    checkGoing();
    if (state.inDoubt && step.op === 'create') {
      const found = await lookup(step);
      if (found) return foundInDoubt(step, state, found);
    }
    let early = unsent.get(step);
    let payload: WritePayload;
    try {
      payload = early?.payload ?? options.load(step);
    } catch (error) {
      if (error instanceof StepRefused) return failed(step, undefined, error.message);
      throw error;
    }
    let rateLimited = 0;
    for (;;) {
      checkGoing();
      // A 429 hands the send time to the throttle: its once-per-epoch rule needs it.
      const sentAt = await waitFor(limiter.acquire(waitSignal));
      checkGoing();
      state.attempts += 1;
      // The intent must be durable before the request leaves: a crash after it is reconciled by name.
      if (early === undefined) {
        const at = now();
        const attempt = step.firstAttempt + state.attempts - 1;
        const written = journal.append(intentRecord(step, payload, run, attempt, at));
        if (!state.inDoubt && !state.sent) unsent.set(step, { payload, at, attempt, written });
        state.firstIntentMs ??= Date.parse(at);
        await written;
      } else {
        state.firstIntentMs ??= Date.parse(early.at);
        await early.written;
        early = undefined;
      }
      // A stop raised meanwhile still prevents the request.
      checkGoing();
      unsent.delete(step);
      state.sent = true;
      let answer: string | undefined | 'absent';
      try {
        const sending = send(step, payload);
        // Once the request has left (a write on the socket happens within this turn).
        setImmediate(writeAhead);
        answer = await sending;
      } catch (error) {
        if (error instanceof StepRefused) return failed(step, undefined, error.message);
        if (error instanceof AuthError) throw stopWith(error);
        // After Ctrl-C the client starts no request: nothing was sent.
        if (error instanceof InterruptedError) throw stopWith(new InterruptedError(INTERRUPTED));
        if (error instanceof ApiError && error.status === 429) {
          // Certainly not applied: no look-up and no retry from the budget.
          limiter.onRateLimited(error.retryAfterMs, sentAt);
          rateLimited += 1;
          if (rateLimited > max429) {
            throw stopWith(
              new UnavailableError(
                `The service kept answering 429 (rate limited) for '${step.targetName}' (${rateLimited} times)`,
              ),
            );
          }
          continue;
        }
        if (error instanceof ApiError && !error.isTransient()) {
          // In doubt: maybe our own earlier request, applied late ("already exists"); else maybe a name
          // someone created after the listing. A look-up tells, not the message.
          if (step.op === 'create' && (state.inDoubt || step.whenTaken === 'exists')) {
            const found = await lookup(step);
            if (found && state.inDoubt) return foundInDoubt(step, state, found);
            if (found) return settle({ kind: 'exists', step, targetId: found.id });
          }
          return failed(step, error.status, error.http.serviceMessage ?? error.message);
        }
        // In doubt, also when nothing was sent (connection refused): a look-up costs one GET, guessing
        // wrong a duplicate.
        if (!(error instanceof ApiError || error instanceof UnavailableError)) throw error;
        const reason = scrub(error.message);
        state.inDoubt = true;
        if (step.op !== 'create') {
          throw stopWith(
            new UnavailableError(
              `Could not ${step.op} '${step.targetName}': ${reason}; re-run to resume`,
              undefined,
              { cause: error },
            ),
          );
        }
        deps.log?.debug(
          { entry: step.targetName, attempt: state.attempts, error: reason },
          'create in doubt; will look the name up before sending again',
        );
        if (!budget.take()) {
          throw stopWith(
            new UnavailableError(`The retry budget of this run is spent (last: ${reason})`, undefined, {
              cause: error,
            }),
          );
        }
        await waitFor(
          clock.sleep(
            computeFullJitter(BACKOFF_BASE_MS, BACKOFF_MAX_MS, state.attempts - 1, random),
            waitSignal,
          ),
        );
        const found = await lookup(step);
        if (found) return foundInDoubt(step, state, found);
        continue;
      }
      if (answer === 'absent') {
        if (step.op === 'delete') return applied(step, state, step.targetId, 'absent');
        return failed(step, undefined, 'no longer in the target (deleted meanwhile); re-run to create it');
      }
      return applied(step, state, answer, step.op === 'create' ? 'post' : 'request');
    }
  };

  const processStep = async (step: Write<P>): Promise<WriteOutcome<P>> => {
    const intentMs = step.intentAt === undefined ? Number.NaN : Date.parse(step.intentAt);
    const state: StepState = { inDoubt: step.inDoubt, attempts: 0, sent: false };
    if (!Number.isNaN(intentMs)) state.firstIntentMs = intentMs;
    try {
      return await runStep(step, state);
    } catch (error) {
      if (!(error instanceof StopRun)) {
        // Stops the other steps as any stop does; rethrown below.
        fatal ??= { error };
        halt.abort();
      }
      return { kind: 'pending', step, inDoubt: state.inDoubt || state.sent };
    }
  };

  const outcomes = new Array<WriteOutcome<P>>(steps.length);
  await forEachLimited(steps, concurrency, async (step, i) => {
    begun = Math.max(begun, i + 1);
    outcomes[i] = await processStep(step);
  });
  // The intents on disk whose request never left (the run stopped first) are withdrawn.
  for (const [step, { attempt, written }] of unsent) {
    const onDisk = await written.then(
      () => true,
      () => false,
    );
    if (onDisk) appendUnsynced(withdrawnRecord(step, run, attempt, now()));
  }
  // Every outcome record written (or its failure known) before the run reports.
  while (outcomeWrites.size > 0) await Promise.all([...outcomeWrites]);
  if (fatal) throw fatal.error;
  let stoppedBy = stopReason;
  if (stoppedBy === undefined && signal.aborted) stoppedBy = new InterruptedError(INTERRUPTED);
  if (stoppedBy === undefined && outcomes.some((o) => o.kind === 'pending')) {
    // Unreachable by design (every stop records its reason): never let such a run look complete.
    stoppedBy = new UnavailableError('The run stopped before every step was settled');
  }
  return { outcomes, stoppedBy };
}
