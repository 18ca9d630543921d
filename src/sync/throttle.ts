/**
 * The run-wide request throttle: a token bucket (GCRA, burst 1: evenly spaced), adaptive (AIMD, as TCP): a
 * 429 pauses it for its Retry-After and sets the rate to {@link DECREASE_FACTOR} of that observed; each calm
 * second adds a little. Told the server's limit (`--rate`), a run stays under it; untold, it settles just
 * under it. One decrease per epoch: a 429 to a request sent before the last one reflects the old rate.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** Time source and sleeper (injected: tests do not wait). */
export interface Clock {
  /** Milliseconds on a monotonic clock. */
  now(): number;
  /** Resolve after `ms`; reject when the signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  sleep: (ms, signal) => sleep(Math.max(0, ms), undefined, { signal }),
};

const DECREASE_FACTOR = 0.7;
/** Requests per second gained per second without a 429. */
const INCREASE_PER_SECOND = 0.5;
const MIN_RATE = 0.2;
/** Pause when a 429 carries no Retry-After, and the longest Retry-After honoured (ms). */
const DEFAULT_PAUSE_MS = 1000;
const MAX_PAUSE_MS = 60_000;

/** A shared, adaptive rate limiter. */
export interface RateLimiter {
  /** Take the next send slot (whether or not the caller then waits): ms to wait for it, 0 = now. */
  reserve(): number;
  /** Wait for a send slot: the clock time of the send (for {@link onRateLimited}). */
  acquire(signal?: AbortSignal): Promise<number>;
  /** A 429 arrived: pause for Retry-After and, once per epoch, lower the rate. */
  onRateLimited(retryAfterMs: number | undefined, sentAt?: number): void;
  /** Requests per second, or undefined while unlimited. */
  currentRate(): number | undefined;
  readonly rateLimitedCount: number;
}

const OBSERVE_WINDOW_MS = 1000;

/** A rate limiter; `rate`: the starting and highest rate (req/s), undefined = none until a 429. */
export function createRateLimiter(
  options: { readonly rate?: number | undefined; readonly clock?: Clock } = {},
): RateLimiter {
  const clock = options.clock ?? systemClock;
  const cap = options.rate ?? Number.POSITIVE_INFINITY;

  /** Rate at `rateSince`; undefined = unlimited. */
  let baseRate: number | undefined = options.rate;
  let rateSince = clock.now();
  /** Theoretical arrival time of the next slot (GCRA). */
  let nextSlot = Number.NEGATIVE_INFINITY;
  let pausedUntil = Number.NEGATIVE_INFINITY;
  let epochEnd = Number.NEGATIVE_INFINITY;
  let limited = 0;
  /** Send times within the observation window, oldest first. */
  const sends: number[] = [];

  const rateAt = (t: number): number | undefined => {
    if (baseRate === undefined) return undefined;
    const grown = baseRate + (INCREASE_PER_SECOND * Math.max(0, t - rateSince)) / 1000;
    return Math.min(cap, grown);
  };

  const observedRate = (t: number): number => {
    while (sends.length > 0 && (sends[0] as number) <= t - OBSERVE_WINDOW_MS) sends.shift();
    let n = 0;
    for (const s of sends) if (s <= t) n += 1;
    return (n * 1000) / OBSERVE_WINDOW_MS;
  };

  const reserve = (): number => {
    const t = clock.now();
    const start = Math.max(t, pausedUntil, nextSlot);
    const rate = rateAt(start);
    nextSlot = rate === undefined ? Number.NEGATIVE_INFINITY : start + 1000 / rate;
    sends.push(start);
    if (sends.length > 10_000) sends.splice(0, sends.length - 10_000);
    return start - t;
  };

  return {
    reserve,
    async acquire(signal) {
      const wait = reserve();
      const sendAt = clock.now() + wait;
      if (wait > 0) await clock.sleep(wait, signal);
      else if (signal?.aborted) throw signal.reason;
      return sendAt;
    },
    onRateLimited(retryAfterMs, sentAt) {
      limited += 1;
      const t = clock.now();
      const pause = Math.min(MAX_PAUSE_MS, Math.max(0, retryAfterMs ?? DEFAULT_PAUSE_MS));
      pausedUntil = Math.max(pausedUntil, t + pause);
      // One decrease per epoch (the last decrease, its pause, a short grace while the server's bucket
      // refills): a request sent within it reflects a rate already acted upon (no send time: answered).
      const stale = (sentAt ?? t) < epochEnd;
      if (stale) return;
      const current = rateAt(t) ?? Number.POSITIVE_INFINITY;
      const observed = observedRate(t);
      const basis =
        observed > 0 ? Math.min(current, observed) : Number.isFinite(current) ? current : MIN_RATE;
      baseRate = Math.max(MIN_RATE, Math.min(cap, basis * DECREASE_FACTOR));
      // The increase starts once the pause is over: the pause is the server's, not a quiet period.
      rateSince = pausedUntil;
      epochEnd = pausedUntil + 250;
      nextSlot = Math.max(nextSlot, pausedUntil);
    },
    currentRate() {
      return rateAt(clock.now());
    },
    get rateLimitedCount() {
      return limited;
    },
  };
}
