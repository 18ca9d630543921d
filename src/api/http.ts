/**
 * The only place that speaks HTTP (the only importer of axios). STUB: signatures fixed, bodies being
 * written (issue #2).
 */
import type { ResolvedEnvironment } from '../config.js';
import type { Logger } from '../log.js';

/** Retry policy as data (style.md habit 4). */
export interface RetryPolicy {
  /** Attempts after the first, per request. */
  readonly retries: number;
  readonly statuses: readonly number[];
  readonly networkCodes: readonly string[];
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  /** Longest Retry-After honoured; longer ones are capped. */
  readonly maxRetryAfterMs: number;
}

/** A run-wide budget of retries shared by every request of a run (so a sick service ends the run). */
export interface RetryBudget {
  /** Take one retry from the budget; false when it is spent. */
  take(): boolean;
  readonly remaining: number;
}

/** One request. `path` is relative to `/api/v1`, e.g. `/ds-connections`. */
export interface HttpRequest {
  readonly method: 'GET' | 'POST' | 'PATCH';
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly body?: unknown;
  /** `safe`: retried on transient failures per policy; `never`: one attempt (creating POSTs). */
  readonly retry: 'safe' | 'never';
  readonly signal?: AbortSignal;
  /** Per-request timeout override. */
  readonly timeoutMs?: number;
}

export interface HttpClientOptions {
  readonly log: Logger;
  /** Default 30 s. */
  readonly timeoutMs?: number;
  readonly retryPolicy?: Partial<RetryPolicy>;
  readonly retryBudget?: RetryBudget;
  /** Aborts every request of the client (Ctrl-C). */
  readonly signal?: AbortSignal;
  /** Called when the service answers 429, with the delay it asked for (ms), for adaptive throttles. */
  readonly onRateLimited?: (retryAfterMs: number | undefined) => void;
}

/** A client bound to one environment: base URL + /api/v1, auth, timeouts, keep-alive, retries. */
export interface HttpClient {
  readonly environment: ResolvedEnvironment;
  /** Send a request and return the parsed JSON body (parsed by content, whatever the content-type). */
  request<T = unknown>(request: HttpRequest): Promise<T>;
  /** Send a GET and return the body as a stream (large exports). Errors as for `request`. */
  requestStream(request: HttpRequest): Promise<NodeJS.ReadableStream>;
  /** Free keep-alive sockets. */
  close(): void;
}

/** Create the client of one environment. */
export declare function createHttpClient(environment: ResolvedEnvironment, options: HttpClientOptions): HttpClient;

/** Create a run-wide retry budget of `size` retries. */
export declare function createRetryBudget(size: number): RetryBudget;
