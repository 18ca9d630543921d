/**
 * The axios seam: the only place that speaks HTTP (the only importer of axios).
 *
 * One client per environment: base URL + `/api/v1`, the Authorization header (`Bearer <t>` or the raw token),
 * an optional user-token exchange (token-exchange.ts), per-request idle timeout and overall deadline, a size
 * cap on buffered answers, keep-alive agents, JSON parsed by content, not content-type (service-error.ts),
 * failures classified by status and code (classify.ts), retries on p-retry with retry-policy.ts.
 *
 * Secret hygiene: axios errors carry the request config, headers included (so the token). None leaves this
 * file: every failure becomes an {@link ApiError}, {@link AuthError}, {@link UnavailableError} or
 * {@link InterruptedError} whose `cause` is a plain, sanitized object.
 */

import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import Module, { createRequire } from 'node:module';
import { PassThrough, type Readable } from 'node:stream';
import type { AxiosInstance, AxiosResponse, AxiosStatic } from 'axios';
import pRetry, { AbortError } from 'p-retry';
import type { ResolvedEnvironment } from '../config.js';
import { countOf } from '../display-name.js';
import { ApiError, InterruptedError, isDdsError, UnavailableError } from '../errors.js';
import {
  type AttemptCut,
  type ClassifyContext,
  classifyCut,
  classifyResponse,
  classifyThrown,
  contextOf,
  type Failure,
  isFailure,
  type Outcome,
} from './classify.js';
import {
  combineSignals,
  defaultSleep,
  type HttpClient,
  type HttpClientOptions,
  type HttpRequest,
  readCa,
  serializeQuery,
} from './http-options.js';
import {
  computeRetryDelay,
  createRetryBudget,
  DEFAULT_RETRY_BUDGET,
  DEFAULT_RETRY_POLICY,
  type RetryPolicy,
} from './retry-policy.js';
import { NotJson, parseBody } from './service-error.js';
import { BodyTooLarge, peekFirstByte, readStreamCapped, readStreamText } from './stream-peek.js';
import { createTokenExchange } from './token-exchange.js';

/** Globals whose first read loads Node's fetch (undici), which axios probes as it loads. */
const FETCH_GLOBALS = ['FormData', 'Request', 'Response', 'ReadableStream'] as const;

/** What axios' bundle requires as it loads for what this client never does: form bodies, proxies, redirects. */
const UNUSED_PACKAGES: Readonly<Record<string, unknown>> = {
  'form-data': class FormData {},
  'follow-redirects': {}, // its transports serve only a maxRedirects above 0
  'https-proxy-agent': class HttpsProxyAgent {
    constructor() {
      throw new Error('this client uses no proxy');
    }
  },
};

/**
 * axios' CommonJS bundle (one file, not 66 modules: ~8 MB less resident), loaded with {@link FETCH_GLOBALS}
 * hidden so that Node's fetch stays unloaded, and {@link UNUSED_PACKAGES} stood in for while it loads
 * (docs/why.md, "Why axios loads without Node's fetch").
 */
function requireAxios(): AxiosStatic {
  const hidden = new Map<string, PropertyDescriptor>();
  for (const name of FETCH_GLOBALS) {
    const descriptor = Object.getOwnPropertyDescriptor(globalThis, name);
    if (descriptor?.configurable !== true) continue;
    hidden.set(name, descriptor);
    Reflect.deleteProperty(globalThis, name);
  }
  const require = createRequire(import.meta.url);
  const fromAxios = createRequire(require.resolve('axios'));
  const stood: string[] = [];
  for (const [name, exports] of Object.entries(UNUSED_PACKAGES)) {
    let file: string;
    try {
      file = fromAxios.resolve(name);
    } catch {
      continue; // an axios that no longer requires it
    }
    if (require.cache[file] !== undefined) continue;
    const module = new Module(file);
    Object.assign(module, { filename: file, loaded: true, exports });
    require.cache[file] = module;
    stood.push(file);
  }
  try {
    return require('axios') as AxiosStatic;
  } finally {
    for (const [name, descriptor] of hidden) Object.defineProperty(globalThis, name, descriptor);
    for (const file of stood) delete require.cache[file];
  }
}

const axios = requireAxios();
const { isAxiosError } = axios;

export type { HttpClient, HttpClientOptions, HttpRequest } from './http-options.js';

/** Default idle timeout of a request (no byte for this long). */
export const DEFAULT_TIMEOUT_MS = 30_000;
/** The TCP keep-alive delay axios sets on each request's socket (adapters/http.js, `setKeepAlive(true, 1000 * 60)`). */
const AXIOS_SOCKET_KEEP_ALIVE_MS = 60_000;
/** Default overall deadline of a buffered (JSON) request: headers and whole body, per attempt. */
export const DEFAULT_DEADLINE_MS = 120_000;
/** Default overall deadline of a streamed download (an export), from its start to its last byte. */
export const DEFAULT_STREAM_DEADLINE_MS = 30 * 60_000;
/** Default cap of a buffered answer, in decoded (decompressed) bytes. */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/** A failed attempt travelling through p-retry (never leaves this file). */
class AttemptFailure extends Error {
  constructor(readonly failure: Failure) {
    super('attempt failed');
  }
}

/** Create the client of one environment. Throws ConfigError (exit 2) for an unusable CA file. */
export function createHttpClient(environment: ResolvedEnvironment, options: HttpClientOptions): HttpClient {
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retryPolicy };
  const budget = options.retryBudget ?? createRetryBudget(DEFAULT_RETRY_BUDGET);
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? defaultSleep;
  const log = options.log.child({ environment: environment.label });
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deadlineMs = options.deadlineMs ?? DEFAULT_DEADLINE_MS;
  const streamDeadlineMs = options.streamDeadlineMs ?? DEFAULT_STREAM_DEADLINE_MS;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const apiPrefix = '/api/v1';
  const ctx: ClassifyContext = {
    label: environment.label,
    apiPrefix,
    policy,
    baseUrl: environment.url,
    ...(environment.tokenSource === undefined ? {} : { tokenSource: environment.tokenSource }),
  };

  // axios sets TCP keep-alive at 60 s on every request's socket, the agent its own (1 s by default) each time
  // it takes a socket back: each is applied again, eight setsockopt calls a request (~70 us on the 2-core
  // benchmark machine). With 60 s on both, Node applies it once per socket.
  const keepAlive = { keepAlive: true, keepAliveMsecs: AXIOS_SOCKET_KEEP_ALIVE_MS };
  const httpAgent = new HttpAgent(keepAlive);
  // Verification pinned on: NODE_TLS_REJECT_UNAUTHORIZED=0 does not switch it off for this client.
  const httpsAgent = new HttpsAgent({
    ...keepAlive,
    rejectUnauthorized: true,
    ca: readCa(environment.caFile),
  });
  const instance: AxiosInstance = axios.create({
    baseURL: `${environment.url}${apiPrefix}`,
    adapter: 'http',
    httpAgent,
    httpsAgent,
    // A redirect could carry the Authorization header elsewhere; the API never redirects.
    maxRedirects: 0,
    // Bodies are always streamed to this file, which caps buffered ones itself (decoded bytes). -1,
    // axios' "no limit": any other value, Infinity too, has axios wrap every streamed answer in an
    // async generator and a second stream to count its bytes (tens of us an answer, and more ticks).
    maxContentLength: -1,
    maxBodyLength: Number.POSITIVE_INFINITY,
    // Every status is handled here, and bodies are parsed here by content, not by content-type.
    validateStatus: () => true,
    transformResponse: [(data: unknown) => data],
    // Bodies go as the JSON text `attempt` writes; axios' default would needlessly parse and trim each again.
    transformRequest: [(data: unknown) => data],
    transitional: { clarifyTimeoutError: true },
    // Every value fully percent-encoded (axios would leave `[`, `]`, `:` and `,` of a JSON filter bare).
    paramsSerializer: { serialize: serializeQuery },
    proxy: false,
  });
  // Every request names its own Accept (and Content-Type with a body): axios' default header buckets would
  // only be merged into each request's config and dropped, ~8 KB of garbage a request.
  (instance.defaults as { headers: unknown }).headers = {};

  const tokens = createTokenExchange(environment, log, (userToken, signal) =>
    send<unknown>(
      { method: 'GET', path: '/refresh-access-token', retry: 'safe', signal },
      'json',
      () => userToken,
      false,
    ),
  );

  /** One attempt. Never throws an axios error. */
  async function attempt<T>(
    request: HttpRequest,
    mode: 'json' | 'stream',
    authValue: string | undefined,
    callerSignal: AbortSignal | undefined,
  ): Promise<Outcome<T>> {
    const started = Date.now();
    // The client's own cut: the overall deadline, or the size cap.
    const cutter = new AbortController();
    let cut: AttemptCut | undefined;
    let body: Readable | undefined;
    const limitMs = mode === 'stream' ? streamDeadlineMs : (request.deadlineMs ?? deadlineMs);
    const cutWith = (reason: AttemptCut): void => {
      cut ??= reason;
      cutter.abort();
      body?.destroy();
    };
    const timer = setTimeout(() => cutWith({ kind: 'deadline', ms: limitMs }), limitMs);
    // The deadline alone never keeps the process alive (a stream left unread must not hold it 30 min).
    timer.unref();
    let handedOver = false;
    const fail = (error: unknown): { failure: Failure } => {
      if (cut) return { failure: classifyCut(ctx, cut, request.method, request.path) };
      const canceled = isAxiosError(error) && error.code === 'ERR_CANCELED';
      const aborted = callerSignal?.aborted === true;
      return { failure: classifyThrown(ctx, error, request.method, request.path, aborted, canceled) };
    };
    const logged = (fields: Record<string, unknown>, message: string): void =>
      log.debug(
        { method: request.method, path: `${apiPrefix}${request.path}`, ...fields, ms: Date.now() - started },
        message,
      );
    try {
      let response: AxiosResponse;
      try {
        response = await instance.request({
          method: request.method,
          url: request.path,
          params: request.query,
          data: request.body === undefined ? undefined : JSON.stringify(request.body),
          headers: {
            Accept: 'application/json',
            ...(request.body === undefined ? {} : { 'Content-Type': 'application/json' }),
            ...(authValue === undefined ? {} : { Authorization: authValue }),
          },
          responseType: 'stream',
          timeout: request.timeoutMs ?? timeoutMs,
          signal: combineSignals([callerSignal, cutter.signal]) as AbortSignal,
        });
      } catch (error) {
        const outcome = fail(error);
        logged({ networkCode: outcome.failure.networkCode }, 'request failed');
        return outcome;
      }
      body = response.data as Readable;
      logged({ status: response.status }, 'response');
      // Node keeps the first of repeated Retry-After headers: a string, or absent.
      const retryAfter = response.headers['retry-after'] as string | undefined;
      const answer = (parsed: unknown): Outcome<T> =>
        classifyResponse<T>(ctx, request.method, request.path, response.status, parsed, retryAfter);
      const ok = response.status >= 200 && response.status < 300;
      try {
        if (mode === 'json' || !ok) {
          const text = ok
            ? (await readStreamCapped(body, maxResponseBytes)).toString('utf8')
            : await readStreamText(body);
          return cut ? fail(undefined) : answer(parseBody(text));
        }
        const peeked = await peekFirstByte(body);
        if (peeked.first !== '[' && peeked.first !== '{') {
          return answer(new NotJson(peeked.first === undefined ? '' : await readStreamText(peeked.stream)));
        }
        if (peeked.first === '{') {
          // A download is an array: an object is an envelope, read whole and classified as JSON (a token
          // refused with a 200 arrives so); a non-failure goes on as it came, for the caller to judge.
          const text = (await readStreamCapped(peeked.stream, maxResponseBytes)).toString('utf8');
          if (cut) return fail(undefined);
          const outcome = answer(parseBody(text));
          if (isFailure(outcome)) return outcome;
          const again = new PassThrough();
          again.end(text);
          return { value: again as T };
        }
        handedOver = true;
        return {
          value: wrapStream(peeked.stream, request, body, timer, () => cut, cutWith, callerSignal) as T,
        };
      } catch (error) {
        if (error instanceof BodyTooLarge) cutWith({ kind: 'too-large', limit: error.limit });
        return fail(error);
      }
    } finally {
      if (!handedOver) clearTimeout(timer);
    }
  }

  /** Errors raised while the caller reads a streamed body become typed too; the deadline runs to its end. */
  function wrapStream(
    source: Readable,
    request: HttpRequest,
    raw: Readable,
    timer: NodeJS.Timeout,
    cutOf: () => AttemptCut | undefined,
    cutWith: (reason: AttemptCut) => void,
    callerSignal: AbortSignal | undefined,
  ): NodeJS.ReadableStream {
    const out = new PassThrough();
    const finish = (): void => clearTimeout(timer);
    const failWith = (error: unknown): void => {
      finish();
      const cut = cutOf();
      // Ctrl-C while the body is read: interrupted (exit 130), as before the answer came.
      const canceled = isAxiosError(error) && error.code === 'ERR_CANCELED';
      const failure = cut
        ? classifyCut(ctx, cut, request.method, request.path)
        : classifyThrown(ctx, error, request.method, request.path, callerSignal?.aborted === true, canceled);
      out.destroy(failure.error);
    };
    source.on('error', failWith);
    raw.on('close', () => {
      if (cutOf()) failWith(undefined);
    });
    out.on('close', () => {
      finish();
      // The caller stopped reading: free the socket.
      if (!raw.destroyed && !raw.readableEnded) cutWith({ kind: 'deadline', ms: 0 });
    });
    source.on('end', finish);
    source.pipe(out);
    return out;
  }

  /**
   * The retry loop, on p-retry: `onFailedAttempt` does what each failure calls for (the 429 hook, the one
   * re-exchange after a 401), `shouldRetry` asks the policy and the run-wide budget and picks the wait (a
   * capped Retry-After, or full jitter) the next attempt waits out; the signal cancels. `auth` gives each
   * attempt's Authorization; `mayReexchange` allows one re-exchange after a 401 (not for the exchange).
   */
  async function send<T>(
    request: HttpRequest,
    mode: 'json' | 'stream',
    auth: () => string | undefined,
    mayReexchange: boolean,
  ): Promise<T> {
    // Ctrl-C cancels a read in flight; a write is left to settle, so that its caller can record what
    // the service did (a write cancelled in flight may have been applied all the same).
    const attemptSignal = combineSignals([
      request.signal,
      request.method === 'GET' ? options.signal : undefined,
    ]);
    const waitSignal = combineSignals([request.signal, options.signal]);
    let reexchanged = false;
    let reexchangeNext = false;
    let retriesDone = 0;
    let refusedDone = 0;
    let delayNext = 0;
    let generation = tokens.generation();
    // p-retry rejects a success that settles after its signal fired; a create that was applied must
    // still reach its caller (the importer journals it), so a settled value wins.
    let settled: { readonly value: T } | undefined;

    const run = async (): Promise<T> => {
      if (delayNext > 0) await sleep(delayNext, waitSignal);
      delayNext = 0;
      if (waitSignal?.aborted) throw new AbortError(new InterruptedError());
      generation = tokens.generation();
      const outcome = await attempt<T>(request, mode, auth(), attemptSignal);
      if (isFailure(outcome)) throw new AttemptFailure(outcome.failure);
      settled = outcome;
      return outcome.value;
    };

    try {
      return await pRetry(run, {
        retries: Number.POSITIVE_INFINITY,
        minTimeout: 0,
        maxTimeout: 0,
        ...(waitSignal ? { signal: waitSignal } : {}),
        onFailedAttempt: async ({ error }) => {
          if (!(error instanceof AttemptFailure)) throw error;
          const failure = error.failure;
          if (failure.status === 429 && request.retry === 'safe')
            options.onRateLimited?.(failure.retryAfterMs);
          reexchangeNext = false;
          if (failure.unauthorized && mayReexchange && environment.refreshToken && !reexchanged) {
            reexchanged = true;
            reexchangeNext = true;
            // Another request may already have exchanged since this one was sent.
            if (generation === tokens.generation()) await tokens.exchange(waitSignal);
          }
        },
        shouldRetry: ({ error }) => {
          if (!(error instanceof AttemptFailure)) return false;
          const failure = error.failure;
          if (reexchangeNext) return true;
          if (failure.unauthorized || !failure.transient || request.retry === 'never') return false;
          const refused = failure.networkCode === 'ECONNREFUSED';
          const exhausted = refused ? refusedDone >= policy.refusedRetries : retriesDone >= policy.retries;
          if (exhausted || !budget.take()) {
            throw giveUp(request, failure, retriesDone + refusedDone + 1, exhausted);
          }
          delayNext = computeRetryDelay(
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
              delayMs: delayNext,
              attempt: retriesDone + refusedDone,
            },
            'retrying after a transient failure',
          );
          return true;
        },
      });
    } catch (error) {
      if (settled) return settled.value;
      if (error instanceof AttemptFailure) throw error.failure.error;
      if (isDdsError(error)) throw error;
      // p-retry rejects with the signal's reason when the signal ends a wait.
      if (waitSignal?.aborted) throw new InterruptedError();
      throw error;
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
        : contextOf(ctx, request.method, request.path);
    const why = exhausted ? `after ${countOf(attempts, 'attempt')}` : "and the run's retry budget is spent";
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

  return {
    environment,
    async request<T = unknown>(request: HttpRequest): Promise<T> {
      await tokens.ensureToken(combineSignals([request.signal, options.signal]));
      return send<T>(request, 'json', tokens.authorization, true);
    },
    async requestStream(request: HttpRequest): Promise<NodeJS.ReadableStream> {
      await tokens.ensureToken(combineSignals([request.signal, options.signal]));
      return send<NodeJS.ReadableStream>(request, 'stream', tokens.authorization, true);
    },
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
