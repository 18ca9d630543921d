import { describe, expect, it } from 'vitest';
import { type Clock, createRateLimiter } from '../../src/sync/throttle.js';

interface SimOptions {
  readonly limit: number;
  readonly latencyMs: number;
  readonly concurrency: number;
  readonly durationMs: number;
  readonly rate?: number;
}

/**
 * A discrete-event simulation: a client with `concurrency` slots sending through the limiter to a server
 * with a token bucket of `limit` req/s (burst = limit) that answers 429 with Retry-After when empty.
 */
function simulate(options: SimOptions) {
  let t = 0;
  const clock: Clock = { now: () => t, sleep: async () => undefined };
  const limiter = createRateLimiter({ ...(options.rate === undefined ? {} : { rate: options.rate }), clock });
  let tokens = options.limit;
  let last = 0;
  const serverTake = (at: number): number | undefined => {
    tokens = Math.min(options.limit, tokens + ((at - last) / 1000) * options.limit);
    last = at;
    if (tokens >= 1) {
      tokens -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil((1 - tokens) / options.limit)) * 1000;
  };
  type Flight = { done: number; sentAt: number; retryAfter: number | undefined };
  let inflight: Flight[] = [];
  const okAt: number[] = [];
  let rejected = 0;
  let sent = 0;
  const complete = (f: Flight) => {
    t = Math.max(t, f.done);
    if (f.retryAfter === undefined) okAt.push(f.done);
    else {
      rejected += 1;
      limiter.onRateLimited(f.retryAfter, f.sentAt);
    }
  };
  while (t < options.durationMs) {
    inflight.sort((a, b) => a.done - b.done);
    if (inflight.length >= options.concurrency) {
      complete(inflight.shift() as Flight);
      continue;
    }
    const sendAt = t + limiter.reserve();
    while (inflight.length > 0 && (inflight[0] as Flight).done <= sendAt)
      complete(inflight.shift() as Flight);
    t = Math.max(t, sendAt);
    sent += 1;
    inflight.push({ done: t + options.latencyMs, sentAt: t, retryAfter: serverTake(t) });
  }
  inflight = [];
  const steadyFrom = options.durationMs / 2;
  const steady = okAt.filter((x) => x >= steadyFrom && x < options.durationMs).length;
  return {
    sent,
    rejectedShare: rejected / sent,
    steadyThroughput: steady / ((options.durationMs - steadyFrom) / 1000),
    overallThroughput: okAt.length / (options.durationMs / 1000),
    finalRate: limiter.currentRate(),
  };
}

describe('createRateLimiter', () => {
  it('spaces requests evenly at the given rate', () => {
    let t = 0;
    const limiter = createRateLimiter({ rate: 10, clock: { now: () => t, sleep: async () => undefined } });
    const waits = [limiter.reserve(), limiter.reserve(), limiter.reserve()];
    expect(waits).toEqual([0, 100, 200]);
    t = 1000;
    expect(limiter.reserve()).toBe(0);
  });

  it('pauses for Retry-After and lowers the rate once per epoch', () => {
    let t = 0;
    const limiter = createRateLimiter({ rate: 10, clock: { now: () => t, sleep: async () => undefined } });
    for (let i = 0; i < 10; i++) limiter.reserve();
    t = 1000;
    limiter.onRateLimited(2000, 900);
    const lowered = limiter.currentRate();
    expect(lowered).toBeLessThan(10);
    // A second 429 for a request sent before the decrease does not lower it again.
    limiter.onRateLimited(2000, 950);
    expect(limiter.currentRate()).toBe(lowered);
    expect(limiter.reserve()).toBeGreaterThanOrEqual(2000);
    // Additive increase after the pause, capped at --rate.
    t = 3000 + 4000;
    expect(limiter.currentRate()).toBeCloseTo((lowered ?? 0) + 2, 5);
    t = 1e6;
    expect(limiter.currentRate()).toBe(10);
  });

  it('stays unlimited until told otherwise', () => {
    const limiter = createRateLimiter({ clock: { now: () => 0, sleep: async () => undefined } });
    expect([limiter.reserve(), limiter.reserve()]).toEqual([0, 0]);
    expect(limiter.currentRate()).toBeUndefined();
  });

  it('with --rate equal to the server limit, sees (almost) no 429 and keeps the rate', () => {
    const r = simulate({ limit: 20, rate: 20, latencyMs: 50, concurrency: 4, durationMs: 60_000 });
    expect(r.rejectedShare).toBeLessThanOrEqual(0.01);
    expect(r.overallThroughput).toBeGreaterThanOrEqual(19);
  });

  it('without --rate, AIMD converges just under an unknown server limit', () => {
    for (const limit of [5, 20, 50]) {
      const r = simulate({ limit, latencyMs: 50, concurrency: 8, durationMs: 240_000 });
      expect(r.rejectedShare, `429 share at limit ${limit}`).toBeLessThanOrEqual(0.05);
      expect(r.steadyThroughput, `steady throughput at limit ${limit}`).toBeGreaterThanOrEqual(0.8 * limit);
      expect(r.steadyThroughput).toBeLessThanOrEqual(limit * 1.01);
    }
  });
});
