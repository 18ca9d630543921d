/** The HTTP client's retry policy as data, the run-wide retry budget, Retry-After and full jitter. */
import { TRANSIENT_STATUSES } from '../errors.js';

export interface RetryPolicy {
  /** Attempts after the first, per request. */
  readonly retries: number;
  /** Statuses that are transient: a safe request is sent again, a create is in doubt. */
  readonly statuses: readonly number[];
  readonly networkCodes: readonly string[];
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** Longest Retry-After honoured; longer ones are capped. */
  readonly maxRetryAfterMs: number;
  /** Retries of ECONNREFUSED: few, as a dead port must end the run within seconds, not a full backoff. */
  readonly refusedRetries: number;
}

/** The default: 5 retries of safe requests, full jitter from 250 ms to 10 s, Retry-After up to 60 s. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  retries: 5,
  statuses: TRANSIENT_STATUSES,
  networkCodes: [
    'ECONNRESET',
    'ECONNREFUSED',
    'ETIMEDOUT',
    'ECONNABORTED',
    'EPIPE',
    'EAI_AGAIN',
    'ENETUNREACH',
    'EHOSTUNREACH',
    'ENETDOWN',
    'ERR_SOCKET_CONNECTION_TIMEOUT',
    'ERR_BAD_RESPONSE',
    'SOCKET_HANG_UP',
  ],
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 60_000,
  refusedRetries: 2,
};

/** True when a status is transient or absent (no answer): a create answered so is in doubt. */
export function isTransientStatus(
  status: number | undefined,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): boolean {
  return status === undefined || policy.statuses.includes(status);
}

/** Size of the retry budget of a client created without one. */
export const DEFAULT_RETRY_BUDGET = 100;

/** A run-wide budget of retries shared by every request of a run (so a sick service ends the run). */
export interface RetryBudget {
  /** Take one retry from the budget; false when it is spent. */
  take(): boolean;
  readonly remaining: number;
}

/** A run-wide budget of `size` retries; `extend(n)` adds some once a run knows its plan. */
export function createRetryBudget(size: number): RetryBudget & { extend(n: number): void } {
  if (!Number.isInteger(size) || size < 0) throw new RangeError(`Expected a retry budget >= 0, got ${size}`);
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
      if (!Number.isInteger(n) || n < 0)
        throw new RangeError(`Expected a retry budget extension >= 0, got ${n}`);
      remaining += n;
    },
  };
}

/** A Retry-After header (delay-seconds or an HTTP date) in ms >= 0; undefined when absent or unreadable. */
export function parseRetryAfter(value: unknown, now: number = Date.now()): number | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** AWS's "full jitter": uniform in [0, min(maxMs, baseMs * 2^attempt)), `attempt` 0-based. */
export function computeFullJitter(
  baseMs: number,
  maxMs: number,
  attempt: number,
  random: () => number,
): number {
  const ceiling = Math.min(maxMs, baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * ceiling);
}

/** The delay before retry `attempt` (0-based): the Retry-After asked for (capped), else full jitter. */
export function computeRetryDelay(
  policy: RetryPolicy,
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number,
): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxRetryAfterMs);
  return computeFullJitter(policy.baseDelayMs, policy.maxDelayMs, attempt, random);
}
