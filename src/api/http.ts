/**
 * The only place that speaks HTTP (the only importer of axios).
 *
 * One client per environment: base URL + `/api/v1`, the Authorization header (`Bearer <t>` or the raw
 * token), an optional user-token exchange, a timeout, keep-alive agents, JSON parsed by content
 * (whatever the content-type says), and a retry policy expressed as data.
 *
 * Secret hygiene: axios errors carry the request config, headers included (so the token). None ever
 * leaves this file: every failure is turned into an {@link ApiError}, {@link AuthError},
 * {@link UnavailableError} or {@link InterruptedError} whose `cause` is a plain, sanitized object.
 */
import { readFileSync } from 'node:fs';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { PassThrough, type Readable } from 'node:stream';
import { rootCertificates } from 'node:tls';
import axios, { type AxiosInstance, type AxiosResponse, isAxiosError } from 'axios';
import type { ResolvedEnvironment } from '../config.js';
import {
  ApiError,
  AuthError,
  ConfigError,
  type DdsError,
  type HttpContext,
  InterruptedError,
  UnavailableError,
} from '../errors.js';
import type { Logger } from '../log.js';
import { maskSecrets, registerSecret, scrub, scrubServiceText } from '../secrets.js';

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
  /**
   * Attempts after the first when the connection is refused (ECONNREFUSED). Kept small: nothing
   * listens on the port, and a dead port must end the run within seconds, not after a full backoff.
   */
  readonly refusedRetries: number;
}

/**
 * The default policy: 5 retries of safe requests on network errors and 408/429/5xx-gateway statuses,
 * full-jitter exponential backoff from 250 ms up to 10 s, a Retry-After honoured up to 60 s.
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  retries: 5,
  statuses: [408, 429, 500, 502, 503, 504],
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

/** Size of the retry budget of a client created without one. */
export const DEFAULT_RETRY_BUDGET = 100;

/** Default request timeout. */
export const DEFAULT_TIMEOUT_MS = 30_000;

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
  /**
   * Aborts the requests of the client (Ctrl-C): no new request starts, backoff waits end, and
   * in-flight `retry: 'safe'` requests are cancelled. An in-flight `retry: 'never'` request (a create)
   * is left to settle so that its outcome can be recorded.
   */
  readonly signal?: AbortSignal;
  /** Called when the service answers 429, with the delay it asked for (ms), for adaptive throttles. */
  readonly onRateLimited?: (retryAfterMs: number | undefined) => void;
  /** Random number in [0, 1) for the backoff jitter (tests inject a fixed one). Default Math.random. */
  readonly random?: () => number;
  /** Wait between attempts (tests inject an instant one). Default a timer that ends early on abort. */
  readonly sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
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

/**
 * Create a run-wide retry budget of `size` retries. `extend(n)` adds `n` retries, for a run that knows
 * its size only after the client exists (the importer sizes it once its plan is known).
 */
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

/**
 * Parse a Retry-After header: delay-seconds or an HTTP date. Returns milliseconds (>= 0), or undefined
 * when absent or unreadable.
 */
export function parseRetryAfter(value: unknown, now: number = Date.now()): number | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/**
 * The delay before retry number `attempt` (0-based): the Retry-After the service asked for (capped),
 * else full jitter over an exponential ceiling (AWS's "full jitter": uniform in [0, min(max, base*2^n))).
 */
export function computeRetryDelay(
  policy: RetryPolicy,
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number,
): number {
  if (retryAfterMs !== undefined) return Math.min(retryAfterMs, policy.maxRetryAfterMs);
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

/**
 * Pull the service's own error text out of a body: `error`, `message` or `errors[]` (spec section 7),
 * looked for at the top and inside `data`. Plain text bodies (a 401 answers with text) are kept short.
 */
export function extractServiceMessage(body: unknown): string | undefined {
  if (typeof body === 'string') {
    const text = body.trim();
    if (text === '') return undefined;
    if (looksLikeHtml(text)) return describeHtml(text);
    // Scrubbed before it is cut: a cut through a secret would leave a prefix no scrub recognises.
    return truncate(scrubServiceText(text), 300);
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const record = body as Record<string, unknown>;
  const parts: string[] = [];
  if (typeof record.error === 'string' && record.error) parts.push(record.error);
  else if (record.error && typeof record.error === 'object') {
    const inner = record.error as Record<string, unknown>;
    if (typeof inner.message === 'string') parts.push(inner.message);
  }
  if (parts.length === 0 && typeof record.message === 'string' && record.message) parts.push(record.message);
  if (Array.isArray(record.errors)) {
    for (const item of record.errors) {
      if (typeof item === 'string') parts.push(item);
      else if (item && typeof item === 'object') {
        const e = item as Record<string, unknown>;
        const text = e.message ?? e.error ?? e.msg;
        parts.push(typeof text === 'string' ? text : describeErrorItem(e));
      }
    }
  }
  if (parts.length === 0 && record.data && typeof record.data === 'object') {
    return extractServiceMessage(record.data);
  }
  if (parts.length === 0) return undefined;
  return truncate(scrubServiceText([...new Set(parts)].join('; ')), 500);
}

/** Keys under which a validation error repeats the offending input (`{field:"password", value:"..."}`). */
const ECHO_KEYS: ReadonlySet<string> = new Set(['value', 'values', 'input', 'received', 'data', 'body']);

/**
 * An `errors[]` item without a message, shown whole, minus the input it echoes and anything named
 * like a credential: the field it names may be a password, which only the key next to it says.
 */
function describeErrorItem(item: Record<string, unknown>): string {
  const shown = Object.entries(maskSecrets(item)).filter(([key]) => !ECHO_KEYS.has(key));
  return JSON.stringify(Object.fromEntries(shown));
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}...` : text;
}

function looksLikeHtml(text: string): boolean {
  return /^<(!doctype|html|head|body|\?xml|[a-z])/i.test(text.trimStart());
}

function describeHtml(text: string): string {
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]?.trim();
  const h1 = /<h1[^>]*>([^<]*)<\/h1>/i.exec(text)?.[1]?.trim();
  const said = title || h1 ? truncate(scrubServiceText(title || h1 || ''), 200) : undefined;
  return said
    ? `the service answered with an HTML page ("${said}") instead of JSON`
    : 'the service answered with an HTML page instead of JSON';
}

/** A failed attempt, before the retry decision. */
interface Failure {
  /** The error to throw if this failure is final. */
  readonly error: DdsError;
  /** Retrying may help (network error, transient status). */
  readonly transient: boolean;
  readonly status?: number;
  readonly networkCode?: string;
  readonly retryAfterMs?: number;
  /** 401: the token was rejected. */
  readonly unauthorized?: boolean;
  /** Header-free description of a network error, for the final message. */
  readonly detail?: string;
}

/** A successful attempt. */
interface Success<T> {
  readonly value: T;
}

type Outcome<T> = Success<T> | { readonly failure: Failure };

function isFailure<T>(outcome: Outcome<T>): outcome is { readonly failure: Failure } {
  return 'failure' in outcome;
}

/** Normalise a Node / axios network error code. */
function networkCodeOf(error: unknown): string | undefined {
  if (!error || typeof error !== 'object') return undefined;
  const e = error as { code?: unknown; message?: unknown; cause?: unknown };
  if (typeof e.code === 'string' && e.code !== 'ERR_BAD_REQUEST') return e.code;
  if (typeof e.message === 'string' && /socket hang up/i.test(e.message)) return 'SOCKET_HANG_UP';
  if (e.cause) return networkCodeOf(e.cause);
  return undefined;
}

/** A short, header-free description of a network error (axios messages name no header). */
function describeNetworkError(error: unknown, code: string | undefined): string {
  const message = error instanceof Error ? error.message : String(error);
  return scrub(code && !message.includes(code) ? `${code}: ${message}` : message);
}

function defaultSleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted || ms <= 0) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

function combineSignals(signals: readonly (AbortSignal | undefined)[]): AbortSignal | undefined {
  const present = signals.filter((s): s is AbortSignal => s !== undefined);
  if (present.length === 0) return undefined;
  if (present.length === 1) return present[0];
  return AbortSignal.any(present);
}

function buildQuery(query: HttpRequest['query']): Record<string, string> | undefined {
  if (!query) return undefined;
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined) out[key] = String(value);
  }
  return out;
}

/** `a=1&b=%5B...%5D`: keys and values percent-encoded with encodeURIComponent. */
function serializeQuery(params: Record<string, unknown>): string {
  return Object.entries(params)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`)
    .join('&');
}

function readHeader(response: AxiosResponse, name: string): string | undefined {
  const value = (response.headers as Record<string, unknown>)[name.toLowerCase()];
  if (Array.isArray(value)) return typeof value[0] === 'string' ? value[0] : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** Parse a body by content: empty -> undefined, JSON -> value, anything else -> a {@link NotJson}. */
class NotJson {
  constructor(readonly text: string) {}
}

function parseBody(text: unknown): unknown {
  if (text === undefined || text === null) return undefined;
  const raw = typeof text === 'string' ? text : Buffer.isBuffer(text) ? text.toString('utf8') : text;
  if (typeof raw !== 'string') return raw;
  const trimmed = raw.trim();
  if (trimmed === '') return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return new NotJson(trimmed);
  }
}

/** True when a JSON body says it failed although the status said success. */
function isErrorEnvelope(body: unknown): boolean {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return false;
  const record = body as Record<string, unknown>;
  return record.success === false || record.status === 'error';
}

/** Read an entire (error) stream into text, at most `limit` bytes kept. */
async function readStreamText(stream: Readable, limit = 64 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    if (size < limit) chunks.push(buf);
    size += buf.length;
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, limit);
}

/**
 * Wait for the first non-blank byte of a stream without consuming it: returns the stream to read
 * from (with the peeked bytes put back) and that byte, or undefined at end of stream.
 */
async function peekFirstByte(stream: Readable): Promise<{ stream: Readable; first: string | undefined }> {
  const seen: Buffer[] = [];
  const iterator = stream[Symbol.asyncIterator]();
  let first: string | undefined;
  for (;;) {
    const next = (await iterator.next()) as IteratorResult<Buffer | string>;
    if (next.done) break;
    const buf = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value);
    seen.push(buf);
    const text = buf.toString('utf8').trimStart();
    if (text !== '') {
      first = text[0];
      break;
    }
  }
  const out = new PassThrough();
  for (const buf of seen) out.write(buf);
  (async () => {
    try {
      for (;;) {
        const next = (await iterator.next()) as IteratorResult<Buffer | string>;
        if (next.done) break;
        if (!out.write(next.value)) await new Promise((resolve) => out.once('drain', resolve));
      }
      out.end();
    } catch (error) {
      out.destroy(error as Error);
    }
  })();
  return { stream: out, first };
}

/** Create the client of one environment. */
export function createHttpClient(environment: ResolvedEnvironment, options: HttpClientOptions): HttpClient {
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retryPolicy };
  const budget = options.retryBudget ?? createRetryBudget(DEFAULT_RETRY_BUDGET);
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? defaultSleep;
  const log = options.log.child({ environment: environment.label });
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const apiPrefix = '/api/v1';

  const httpAgent = new HttpAgent({ keepAlive: true });
  const httpsAgent = new HttpsAgent({ keepAlive: true, ca: readCa(environment.caFile) });
  const instance: AxiosInstance = axios.create({
    baseURL: `${environment.url}${apiPrefix}`,
    adapter: 'http',
    httpAgent,
    httpsAgent,
    // A redirect could carry the Authorization header elsewhere; the API never redirects.
    maxRedirects: 0,
    maxContentLength: Number.POSITIVE_INFINITY,
    maxBodyLength: Number.POSITIVE_INFINITY,
    // Every status is handled here, and bodies are parsed here by content, not by content-type.
    validateStatus: () => true,
    transformResponse: [(data: unknown) => data],
    transitional: { clarifyTimeoutError: true },
    // Every value fully percent-encoded (axios would leave `[`, `]`, `:` and `,` of a JSON filter bare).
    paramsSerializer: { serialize: serializeQuery },
    proxy: false,
  });

  let token = environment.token;
  if (token) registerSecret(token);
  if (environment.refreshToken) registerSecret(environment.refreshToken);
  /** Bumped on each exchange, so concurrent 401s on the same token trigger one exchange only. */
  let tokenGeneration = 0;
  let exchanging: Promise<void> | undefined;

  function authorization(value: string): string {
    return environment.authScheme === 'raw' ? value : `Bearer ${value}`;
  }

  function contextOf(method: string, path: string, status?: number, serviceMessage?: string): HttpContext {
    return {
      method,
      path: `${apiPrefix}${path}`,
      ...(status === undefined ? {} : { status }),
      ...(serviceMessage === undefined ? {} : { serviceMessage }),
    };
  }

  /** Turn a response (status + parsed body) into an outcome. */
  function classifyResponse<T>(
    method: string,
    path: string,
    status: number,
    body: unknown,
    response: AxiosResponse,
  ): Outcome<T> {
    if (status === 401) {
      const said = extractServiceMessage(body instanceof NotJson ? body.text : body);
      return {
        failure: {
          error: new AuthError(
            `The service rejected the token of ${environment.label}`,
            contextOf(method, path, 401, said),
            {
              cause: { status: 401, method, path: `${apiPrefix}${path}` },
            },
          ),
          transient: false,
          status: 401,
          unauthorized: true,
        },
      };
    }
    const ok = status >= 200 && status < 300;
    if (ok && body instanceof NotJson) {
      // A proxy's "502 Bad Gateway" page with a 200: the request may or may not have been applied.
      const http = contextOf(method, path, 502, describeHtmlOrText(body.text));
      return {
        failure: {
          error: new ApiError(http, { cause: { status, method, path: http.path, nonJson: true } }),
          transient: policy.statuses.includes(502),
          status: 502,
        },
      };
    }
    if (ok && !isErrorEnvelope(body)) return { value: body as T };
    // An error status, or an error envelope on a 2xx.
    const envelope = body && typeof body === 'object' ? (body as Record<string, unknown>) : undefined;
    const bodyStatus =
      typeof envelope?.statusCode === 'number' && envelope.statusCode >= 400
        ? envelope.statusCode
        : undefined;
    const effective = ok ? (bodyStatus ?? status) : status;
    const said = extractServiceMessage(body instanceof NotJson ? body.text : body);
    const http = contextOf(method, path, effective, said);
    const retryAfterMs = parseRetryAfter(readHeader(response, 'retry-after'));
    return {
      failure: {
        error: new ApiError(http, {
          cause: { status: effective, method, path: http.path },
          ...(status >= 300 && status < 400
            ? { hint: 'The service answered with a redirect; check the environment URL' }
            : {}),
        }),
        transient: policy.statuses.includes(effective),
        status: effective,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      },
    };
  }

  function describeHtmlOrText(text: string): string {
    return looksLikeHtml(text) ? describeHtml(text) : 'the service answered with a body that is not JSON';
  }

  function classifyThrown(
    error: unknown,
    method: string,
    path: string,
    signal: AbortSignal | undefined,
  ): Failure {
    if (signal?.aborted || (isAxiosError(error) && error.code === 'ERR_CANCELED')) {
      return { error: new InterruptedError(), transient: false };
    }
    const code = networkCodeOf(error);
    const description = describeNetworkError(error, code);
    // ECONNREFUSED and DNS failures never reached the service; anything else may have.
    const inDoubt = code !== 'ECONNREFUSED' && code !== 'ENOTFOUND' && code !== 'EAI_AGAIN';
    const http = contextOf(method, path);
    return {
      error: new UnavailableError(`Cannot reach ${environment.label} (${description})`, http, {
        cause: { code, message: description, method, path: http.path },
        ...(code === undefined ? {} : { networkCode: code }),
        inDoubt,
      }),
      transient: code !== undefined && policy.networkCodes.includes(code),
      ...(code === undefined ? {} : { networkCode: code }),
      detail: description,
    };
  }

  /** One attempt. Never throws an axios error. */
  async function attempt<T>(
    request: HttpRequest,
    mode: 'json' | 'stream',
    authValue: string | undefined,
    signal: AbortSignal | undefined,
  ): Promise<Outcome<T>> {
    const started = Date.now();
    let response: AxiosResponse;
    try {
      response = await instance.request({
        method: request.method,
        url: request.path,
        params: buildQuery(request.query),
        data: request.body === undefined ? undefined : JSON.stringify(request.body),
        headers: {
          Accept: 'application/json',
          ...(request.body === undefined ? {} : { 'Content-Type': 'application/json' }),
          ...(authValue === undefined ? {} : { Authorization: authValue }),
        },
        responseType: mode === 'stream' ? 'stream' : 'text',
        timeout: request.timeoutMs ?? timeoutMs,
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      const failure = classifyThrown(error, request.method, request.path, signal);
      log.debug(
        {
          method: request.method,
          path: `${apiPrefix}${request.path}`,
          networkCode: failure.networkCode,
          ms: Date.now() - started,
        },
        'request failed',
      );
      return { failure };
    }
    log.debug(
      {
        method: request.method,
        path: `${apiPrefix}${request.path}`,
        status: response.status,
        ms: Date.now() - started,
      },
      'response',
    );
    if (mode === 'stream') {
      const stream = response.data as Readable;
      const ok = response.status >= 200 && response.status < 300;
      try {
        if (!ok) {
          const text = await readStreamText(stream);
          return classifyResponse<T>(
            request.method,
            request.path,
            response.status,
            parseBody(text),
            response,
          );
        }
        const peeked = await peekFirstByte(stream);
        if (peeked.first !== '[' && peeked.first !== '{') {
          const text = peeked.first === undefined ? '' : await readStreamText(peeked.stream);
          return classifyResponse<T>(
            request.method,
            request.path,
            response.status,
            new NotJson(text),
            response,
          );
        }
        return { value: wrapStream(peeked.stream, request) as T };
      } catch (error) {
        return { failure: classifyThrown(error, request.method, request.path, signal) };
      }
    }
    return classifyResponse<T>(
      request.method,
      request.path,
      response.status,
      parseBody(response.data),
      response,
    );
  }

  /** Errors raised while the caller reads a streamed body become typed errors too. */
  function wrapStream(source: Readable, request: HttpRequest): NodeJS.ReadableStream {
    const out = new PassThrough();
    source.on('error', (error) => {
      const failure = classifyThrown(error, request.method, request.path, undefined);
      out.destroy(failure.error);
    });
    source.pipe(out);
    return out;
  }

  /** Exchange the user token for a session token (single-flight). */
  async function exchange(signal: AbortSignal | undefined): Promise<void> {
    const refreshToken = environment.refreshToken;
    if (!refreshToken) return;
    if (!exchanging) {
      exchanging = (async () => {
        // The user token is sent as the header value itself, as real deployments expect (api-notes).
        let body: unknown;
        try {
          body = await send<unknown>(
            { method: 'GET', path: '/refresh-access-token', retry: 'safe', ...(signal ? { signal } : {}) },
            'json',
            () => refreshToken,
            false,
          );
        } catch (error) {
          // `success:false` at HTTP 200, or a 4xx: the user token itself was refused.
          if (error instanceof ApiError && !error.isTransient()) {
            throw new AuthError(
              `The service refused to exchange the user token of ${environment.label}`,
              error.http,
              {
                hint: 'Check the user token named by refreshTokenEnv',
                cause: { status: error.status, path: error.http.path },
              },
            );
          }
          throw error;
        }
        const record = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
        if (record.success !== true || typeof record.systemToken !== 'string' || record.systemToken === '') {
          throw new AuthError(
            `The service refused to exchange the user token of ${environment.label}`,
            contextOf('GET', '/refresh-access-token', 200, extractServiceMessage(body)),
            { hint: 'Check the user token named by refreshTokenEnv' },
          );
        }
        registerSecret(record.systemToken);
        token = record.systemToken;
        tokenGeneration += 1;
        log.debug({ generation: tokenGeneration }, 'exchanged the user token for a session token');
      })().finally(() => {
        exchanging = undefined;
      });
    }
    await exchanging;
  }

  async function ensureToken(signal: AbortSignal | undefined): Promise<void> {
    if (token === undefined && environment.refreshToken) await exchange(signal);
  }

  /**
   * The retry loop. `auth` gives the Authorization value of each attempt; `mayReexchange` allows one
   * user-token re-exchange after a 401 (not for the exchange itself).
   */
  async function send<T>(
    request: HttpRequest,
    mode: 'json' | 'stream',
    auth: () => string | undefined,
    mayReexchange: boolean,
  ): Promise<T> {
    // Ctrl-C cancels safe requests in flight; a create (retry 'never') is left to settle.
    const attemptSignal = combineSignals([
      request.signal,
      request.retry === 'safe' ? options.signal : undefined,
    ]);
    const waitSignal = combineSignals([request.signal, options.signal]);
    let reexchanged = false;
    let retriesDone = 0;
    let refusedDone = 0;
    for (;;) {
      if (waitSignal?.aborted) throw new InterruptedError();
      const generation = tokenGeneration;
      const outcome = await attempt<T>(request, mode, auth(), attemptSignal);
      if (!isFailure(outcome)) return outcome.value;
      const failure = outcome.failure;
      if (failure.status === 429) options.onRateLimited?.(failure.retryAfterMs);
      if (failure.unauthorized) {
        if (mayReexchange && environment.refreshToken && !reexchanged) {
          reexchanged = true;
          // Another request may already have exchanged since this one was sent.
          if (generation === tokenGeneration) await exchange(waitSignal);
          continue;
        }
        throw failure.error;
      }
      if (!failure.transient || request.retry === 'never') throw failure.error;
      const refused = failure.networkCode === 'ECONNREFUSED';
      const exhausted = refused ? refusedDone >= policy.refusedRetries : retriesDone >= policy.retries;
      if (exhausted || !budget.take())
        throw giveUp(request, failure, retriesDone + refusedDone + 1, exhausted);
      const delay = computeRetryDelay(
        policy,
        refused ? refusedDone : retriesDone,
        failure.retryAfterMs,
        random,
      );
      if (refused) refusedDone += 1;
      else retriesDone += 1;
      log.info(
        {
          method: request.method,
          path: `${apiPrefix}${request.path}`,
          status: failure.status,
          networkCode: failure.networkCode,
          delayMs: delay,
          attempt: retriesDone + refusedDone,
        },
        'retrying after a transient failure',
      );
      await sleep(delay, waitSignal);
      if (waitSignal?.aborted) throw new InterruptedError();
    }
  }

  /** The error of a transient failure that will not be retried any more: exit 5. */
  function giveUp(
    request: HttpRequest,
    failure: Failure,
    attempts: number,
    exhausted: boolean,
  ): UnavailableError {
    const last = failure.error;
    const http =
      last instanceof ApiError || last instanceof UnavailableError
        ? last.http
        : contextOf(request.method, request.path);
    const why = exhausted
      ? `after ${attempts} attempt${attempts === 1 ? '' : 's'}`
      : "and the run's retry budget is spent";
    const base =
      last instanceof UnavailableError
        ? `Cannot reach ${environment.label} ${why} (${failure.detail ?? failure.networkCode ?? 'no answer'})`
        : `${environment.label} kept failing ${why}`;
    const inDoubt = last instanceof UnavailableError ? last.inDoubt : true;
    return new UnavailableError(base, http, {
      cause: { status: failure.status, networkCode: failure.networkCode, attempts, message: last.message },
      ...(failure.networkCode === undefined ? {} : { networkCode: failure.networkCode }),
      inDoubt,
    });
  }

  /** The Authorization value of the current token (read per attempt: an exchange may replace it). */
  const currentAuthorization = (): string | undefined =>
    token === undefined ? undefined : authorization(token);

  return {
    environment,
    async request<T = unknown>(request: HttpRequest): Promise<T> {
      await ensureToken(combineSignals([request.signal, options.signal]));
      return send<T>(request, 'json', currentAuthorization, true);
    },
    async requestStream(request: HttpRequest): Promise<NodeJS.ReadableStream> {
      await ensureToken(combineSignals([request.signal, options.signal]));
      return send<NodeJS.ReadableStream>(request, 'stream', currentAuthorization, true);
    },
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

/** The trusted CAs: Node's roots plus the environment's `caFile` (which adds, never replaces). */
function readCa(caFile: string | undefined): string[] | undefined {
  if (!caFile) return undefined;
  try {
    return [...rootCertificates, readFileSync(caFile, 'utf8')];
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new ConfigError(`Cannot read the CA file ${caFile}${code ? ` (${code})` : ''}`, {
      hint: 'Check --ca-file / caFile',
    });
  }
}
