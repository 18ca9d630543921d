/** The HTTP client's surface and the pieces of it that need no axios. */
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { rootCertificates } from 'node:tls';
import type { ResolvedEnvironment } from '../config.js';
import { ApiError, ConfigError } from '../errors.js';
import type { Logger } from '../log.js';
import type { RetryBudget, RetryPolicy } from './retry-policy.js';

/** One request. `path` is relative to `/api/v1`, e.g. `/ds-connections`. */
export interface HttpRequest {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  readonly body?: unknown;
  /** `safe`: retried when transient (idempotent); `never`: one attempt (a create: the caller decides). */
  readonly retry: 'safe' | 'never';
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
  /** Overall deadline of one attempt. */
  readonly deadlineMs?: number;
}

export interface HttpClientOptions {
  readonly log: Logger;
  /** Idle timeout: no byte for this long fails the attempt (ETIMEDOUT). Default 30 s. */
  readonly timeoutMs?: number;
  /** Deadline of one attempt, headers to last byte: a trickling body cannot hold a run. Default 2 min. */
  readonly deadlineMs?: number;
  /** Overall deadline of a streamed download, start to last byte. Default 30 min. */
  readonly streamDeadlineMs?: number;
  /** Cap of a buffered answer in decoded bytes. Default 64 MiB. Streamed downloads are not capped. */
  readonly maxResponseBytes?: number;
  readonly retryPolicy?: Partial<RetryPolicy>;
  readonly retryBudget?: RetryBudget;
  /** Ctrl-C: no request starts, waits end, a GET is cancelled; a write settles so its outcome is recorded. */
  readonly signal?: AbortSignal;
  /** A 429 to a `retry: 'safe'` request and its delay (a create's: {@link ApiError}, its caller knows when). */
  readonly onRateLimited?: (retryAfterMs: number | undefined) => void;
  /** For the backoff jitter; default Math.random. */
  readonly random?: () => number;
  /** Wait between attempts; default a timer that ends early on abort. */
  readonly sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
}

/** A client bound to one environment: base URL + /api/v1, auth, timeouts, keep-alive, retries. */
export interface HttpClient {
  readonly environment: ResolvedEnvironment;
  /** The parsed body (parsed by content, whatever the content-type). */
  request<T = unknown>(request: HttpRequest): Promise<T>;
  /** A GET's body as a stream (large exports). */
  requestStream(request: HttpRequest): Promise<NodeJS.ReadableStream>;
  close(): void;
}

/** What a request by id or name found: its answer's body, or nothing of that id or name. */
export type Found<T> = { readonly kind: 'done'; readonly value: T } | { readonly kind: 'absent' };

/** Send `request`; `absent` when the refusal says there is no such object (`isAbsent`, default a 404). */
export async function requestOrAbsent(
  client: HttpClient,
  request: HttpRequest,
  isAbsent: (error: ApiError) => boolean = (error) => error.status === 404,
): Promise<Found<unknown>> {
  try {
    return { kind: 'done', value: await client.request<unknown>(request) };
  } catch (error) {
    if (error instanceof ApiError && isAbsent(error)) return { kind: 'absent' };
    throw error;
  }
}

/** Cut short, not failed, when `signal` fires. */
export async function defaultSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (ms > 0) await delay(ms, undefined, { signal }).catch(() => undefined);
}

export function combineSignals(signals: readonly (AbortSignal | undefined)[]): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length === 0) return undefined;
  if (present.length === 1) return present[0];
  return AbortSignal.any(present);
}

/** `a=1&b=%5B...%5D`, undefined values left out. */
export function serializeQuery(params: Record<string, unknown>): string {
  return Object.entries(params)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`)
    .join('&');
}

/** Node's roots plus `caFile`; one with no certificate that parses is refused now (Node would ignore it). */
export function readCa(caFile: string | undefined): string[] | undefined {
  if (!caFile) return undefined;
  let text: string;
  try {
    text = readFileSync(caFile, 'utf8');
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new ConfigError(`Cannot read the CA file ${caFile}${code ? ` (${code})` : ''}`, {
      hint: 'Check --ca-file / caFile',
    });
  }
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0 || !blocks.every(isCertificate)) {
    throw new ConfigError(`The CA file ${caFile} holds no valid PEM certificate`, {
      hint: 'Check --ca-file / caFile (a PEM file with -----BEGIN CERTIFICATE----- blocks)',
    });
  }
  return [...rootCertificates, text];
}

function isCertificate(pem: string): boolean {
  try {
    new X509Certificate(pem);
    return true;
  } catch {
    return false;
  }
}
