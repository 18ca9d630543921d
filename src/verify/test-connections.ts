/**
 * The connection tests of `verify --test-connections`: one `POST /ds-connection-test` per present
 * connection (stored secret: `isNewPassword: false`), on a throttle of their own. A test makes the
 * service reach the data source, so it is slow and heavy: a low default rate and concurrency, its own
 * retry budget, and its own rate limiter (the import's throttle, {@link createRateLimiter}) that
 * slows down on a 429 without slowing the reads of the run.
 *
 * The first error that ends the run (a rejected token, an unreachable service, Ctrl-C) stops starting
 * new tests; the tests in flight settle, then it is thrown. A test request the service refuses with a
 * 4xx is that connection's `error` verdict, not the end of the run.
 */
import { setMaxListeners } from 'node:events';
import { testConnection } from '../api/connections.js';
import type { HttpClient } from '../api/http.js';
import { ApiError, InterruptedError } from '../errors.js';
import type { Connection } from '../model/connection.js';
import { forEachLimited } from '../sync/limited.js';
import type { RateLimiter } from '../sync/throttle.js';
import { judgeTest, type RecordedTest, type TestVerdict } from './verdict.js';

/** Default tests per second when neither `--rate` nor the environment's `rate` is lower. */
export const DEFAULT_TEST_RATE = 2;
/** Default tests in flight at once (never more than the environment's `concurrency`). */
export const DEFAULT_TEST_CONCURRENCY = 2;

/** One connection to test: the environment's object as it holds it, and the snapshot's record. */
export interface TestTarget {
  readonly connection: Connection;
  readonly recorded: RecordedTest;
}

export interface TestRunDeps {
  readonly client: HttpClient;
  readonly limiter: RateLimiter;
  readonly concurrency: number;
  /** Ctrl-C. */
  readonly signal: AbortSignal;
  /** Called as each test settles, in the order they settle. */
  readonly onSettled: (name: string, verdict: TestVerdict) => void;
}

/** Test every target; resolves to the verdicts by name once every started test has settled. */
export async function runConnectionTests(
  targets: readonly TestTarget[],
  deps: TestRunDeps,
): Promise<Map<string, TestVerdict>> {
  const verdicts = new Map<string, TestVerdict>();
  // Stops waiting tasks on Ctrl-C or on the first error that ends the run.
  const stop = new AbortController();
  const stopped = AbortSignal.any([deps.signal, stop.signal]);
  setMaxListeners(deps.concurrency + 10, stopped);
  let fatal: unknown;

  // Never rejects: a refused test is a verdict, an error that ends the run is kept in `fatal`.
  const testOne = async (target: TestTarget): Promise<void> => {
    if (stopped.aborted) return;
    try {
      await deps.limiter.acquire(stopped);
    } catch {
      return; // stopped while waiting for a slot
    }
    if (stopped.aborted) return;
    let verdict: TestVerdict;
    try {
      const outcome = await testConnection(deps.client, target.connection, { signal: deps.signal });
      verdict = judgeTest(outcome, target.recorded);
    } catch (error) {
      if (isRefusedTest(error)) {
        verdict = {
          kind: 'error',
          ...(error.status === undefined ? {} : { status: error.status }),
          message: error.message,
        };
      } else {
        fatal ??= error;
        stop.abort(error);
        return;
      }
    }
    verdicts.set(target.connection.name, verdict);
    deps.onSettled(target.connection.name, verdict);
  };

  await forEachLimited(targets, deps.concurrency, testOne);
  if (fatal !== undefined) throw fatal;
  if (deps.signal.aborted) throw new InterruptedError('Interrupted during the connection tests');
  return verdicts;
}

/**
 * A definite refusal of the test request (4xx other than 401/429, which the client turns into an
 * AuthError or retries): that connection's `error` verdict. Anything else ends the run.
 */
function isRefusedTest(error: unknown): error is ApiError {
  return (
    error instanceof ApiError &&
    !error.isTransient() &&
    error.status !== undefined &&
    error.status >= 400 &&
    error.status < 500
  );
}
