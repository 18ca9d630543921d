/** A token bucket: `rate` tokens per second, at most `burst` saved up. */

/** The bucket's answer to one request. */
export type RateDecision =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly retryAfterSeconds: number };

/** A token bucket rate limiter on a monotonic clock. */
export class TokenBucket {
  private readonly rate: number;
  private readonly burst: number;
  private readonly now: () => number;
  private tokens: number;
  private last: number;

  constructor(rate: number, burst: number, now: () => number = () => performance.now()) {
    this.rate = rate;
    this.burst = burst;
    this.now = now;
    this.tokens = burst;
    this.last = now();
  }

  /** Take one token, or say how long until one is available (whole seconds, at least 1). */
  take(): RateDecision {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.rate);
    this.last = t;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { allowed: true };
    }
    const waitSeconds = (1 - this.tokens) / this.rate;
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(waitSeconds)) };
  }
}
