/**
 * `verify --test-connections`: a test makes the service reach the data source, slow and heavy: a low default
 * rate and concurrency, and a throttle of its own that slows down on a 429 without slowing the run's reads.
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

/** The environment's connection, and what the snapshot recorded of its last test. */
export interface TestTarget {
  readonly connection: Connection;
  readonly recorded: RecordedTest;
}

export interface TestRunDeps {
  readonly client: HttpClient;
  readonly limiter: RateLimiter;
  readonly concurrency: number;
  readonly signal: AbortSignal;
  /** Called as each test settles. */
  readonly onSettled: (name: string, verdict: TestVerdict) => void;
}

/**
 * One `POST /ds-connection-test` per target; verdicts by name. The first error ending the run (token,
 * network, Ctrl-C) stops new tests, thrown once those in flight settle; a 4xx is that connection's `error`.
 */
export async function runConnectionTests(
  targets: readonly TestTarget[],
  deps: TestRunDeps,
): Promise<Map<string, TestVerdict>> {
  const verdicts = new Map<string, TestVerdict>();
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
      return;
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

/** A 4xx refusal of the test (401 and 429 the client handles): that connection's `error`; else the run ends. */
function isRefusedTest(error: unknown): error is ApiError {
  return (
    error instanceof ApiError &&
    !error.isTransient() &&
    error.status !== undefined &&
    error.status >= 400 &&
    error.status < 500
  );
}
