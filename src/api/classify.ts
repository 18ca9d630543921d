/**
 * Every answer or thrown error of one attempt becomes a value or a {@link Failure}, by status and network
 * code, never by message text. No axios type leaves src/api/http.ts: thrown errors are read as plain objects.
 */
import {
  ApiError,
  AuthError,
  assertNever,
  type DdsError,
  type HttpContext,
  InterruptedError,
  UnavailableError,
} from '../errors.js';
import { isRecord } from '../own-property.js';
import { scrub } from '../secrets.js';
import { isTransientStatus, parseRetryAfter, type RetryPolicy } from './retry-policy.js';
import { describeHtmlOrText, extractServiceMessage, isErrorEnvelope, NotJson } from './service-error.js';

/** A failed attempt, before the retry decision; `error` is thrown if it is final. */
export interface Failure {
  readonly error: DdsError;
  readonly transient: boolean;
  readonly status?: number;
  readonly networkCode?: string;
  readonly retryAfterMs?: number;
  /** 401: the token was rejected. */
  readonly unauthorized?: boolean;
  /** Header-free description of a network error, for the final message. */
  readonly detail?: string;
}

export type Outcome<T> = { readonly value: T } | { readonly failure: Failure };

export function isFailure<T>(outcome: Outcome<T>): outcome is { readonly failure: Failure } {
  return 'failure' in outcome;
}

/** What classification needs to know about the client. */
export interface ClassifyContext {
  readonly label: string;
  /** Where the token was read, named by the hint of a 401. */
  readonly tokenSource?: string;
  readonly apiPrefix: string;
  readonly policy: RetryPolicy;
  /** `https://host:port`, for the advice of a TLS failure. */
  readonly baseUrl?: string;
}

/** The header-free description of one exchange. */
export function contextOf(
  ctx: ClassifyContext,
  method: string,
  path: string,
  status?: number,
  serviceMessage?: string,
): HttpContext {
  return {
    method,
    path: `${ctx.apiPrefix}${path}`,
    ...(status === undefined ? {} : { status }),
    ...(serviceMessage === undefined ? {} : { serviceMessage }),
  };
}

/**
 * True when an answer below 500 refuses the token without a 401 (api-notes [seen]: `200`, `text/html`,
 * `{"success":false,"message":"Failed to authenticate token."}`): the one class the service's text
 * decides, with authentication words only (docs/service.md, "Tokens").
 */
export function isTokenRefusal(status: number, body: unknown): boolean {
  if (status >= 500 || !isRecord(body)) return false;
  if (body.statusCode === 401) return true;
  if (body.success !== false && body.status !== 'error') return false;
  const message =
    typeof body.message === 'string' ? body.message : typeof body.error === 'string' ? body.error : '';
  return AUTH_REFUSAL_WORDS.test(message);
}

/** What a refusal's message says ([seen] "Failed to authenticate token."). */
const AUTH_REFUSAL_WORDS =
  /\b(fail(ed)? to authenticate|authentication (failed|required)|not authenticated|unauthori[sz]ed)\b/i;

/** Turn a response (status + parsed body + Retry-After header) into an outcome. */
export function classifyResponse<T>(
  ctx: ClassifyContext,
  method: string,
  path: string,
  status: number,
  body: unknown,
  retryAfterHeader: string | undefined,
): Outcome<T> {
  if (status === 401 || isTokenRefusal(status, body)) {
    // Exit 4, not retried; the hint names where the token was read, never the token.
    const said = extractServiceMessage(body instanceof NotJson ? body.text : body);
    const http = contextOf(ctx, method, path, status, said);
    const error = new AuthError(`The service rejected the token of ${ctx.label}`, http, {
      cause: { status, method, path: http.path },
      ...(ctx.tokenSource === undefined
        ? {}
        : { hint: `Check the token in ${ctx.tokenSource} and that it is valid for ${ctx.label}` }),
    });
    return { failure: { error, transient: false, status, unauthorized: true } };
  }
  const ok = status >= 200 && status < 300;
  if (ok && body instanceof NotJson) {
    // api-notes [seen]: a proxy's "502 Bad Gateway" page with a 200; the request may have been applied.
    const http = contextOf(ctx, method, path, 502, body.why ?? describeHtmlOrText(body.text));
    // A proxy's page passes. JSON too deep (`why`) is the service's own: a reread gets it; a write is in doubt.
    const transient =
      body.why === undefined ? isTransientStatus(502, ctx.policy) : method.toUpperCase() !== 'GET';
    return {
      failure: {
        error: new ApiError(http, { cause: { status, method, path: http.path, nonJson: true }, transient }),
        transient,
        status: 502,
      },
    };
  }
  if (ok && !isErrorEnvelope(body)) return { value: body as T };
  const bodyStatus =
    isRecord(body) && typeof body.statusCode === 'number' && body.statusCode >= 400
      ? body.statusCode
      : undefined;
  const effective = ok ? (bodyStatus ?? status) : status;
  const said = extractServiceMessage(body instanceof NotJson ? body.text : body);
  const http = contextOf(ctx, method, path, effective, said);
  const retryAfterMs = parseRetryAfter(retryAfterHeader);
  const transient = isTransientStatus(effective, ctx.policy);
  return {
    failure: {
      error: new ApiError(http, {
        cause: { status: effective, method, path: http.path },
        transient,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        ...(status >= 300 && status < 400
          ? { hint: 'The service answered with a redirect; check the environment URL' }
          : effective === 403
            ? {
                hint: `The token of ${ctx.label} was accepted but may not do this: check the permissions of its user in the service`,
              }
            : {}),
      }),
      transient,
      status: effective,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    },
  };
}

/** Normalise a Node / axios network error code. */
export function networkCodeOf(error: unknown): string | undefined {
  if (!error || typeof error !== 'object') return undefined;
  const e = error as { code?: unknown; message?: unknown; cause?: unknown };
  if (typeof e.code === 'string' && e.code !== 'ERR_BAD_REQUEST') return e.code;
  if (typeof e.message === 'string' && /socket hang up/i.test(e.message)) return 'SOCKET_HANG_UP';
  if (e.cause) return networkCodeOf(e.cause);
  return undefined;
}

/** A certificate / TLS verification failure, by Node's and OpenSSL's codes. */
const TLS_CODE =
  /^(CERT_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|ERR_TLS_CERT|ERR_SSL_|HOSTNAME_MISMATCH|INVALID_CA|INVALID_PURPOSE)/;

/**
 * A TLS handshake's failure in words, and what to do, by code: OpenSSL's text spans lines and says
 * nothing to a user. `EPROTO` on an `https://` URL is a server answering plain HTTP (no TLS record).
 */
export function describeTlsFailure(
  code: string | undefined,
  baseUrl: string | undefined,
): { readonly what: string; readonly hint: string } | undefined {
  const https = baseUrl !== undefined && /^https:/i.test(baseUrl);
  if (code === 'EPROTO' && https) {
    const plain = baseUrl.replace(/^https:/i, 'http:');
    return {
      what: 'the server did not answer in TLS (as a server of plain HTTP answers)',
      hint: `If it serves plain HTTP, use ${plain} (allowed for loopback hosts, else with --insecure-http); else check the port`,
    };
  }
  if (code === undefined || !TLS_CODE.test(code)) return undefined;
  switch (code) {
    case 'CERT_HAS_EXPIRED':
      return {
        what: "the server's certificate has expired",
        hint: "Renew the service's certificate (or check this machine's clock)",
      };
    case 'CERT_NOT_YET_VALID':
      return {
        what: "the server's certificate is not valid yet",
        hint: "Check this machine's clock and the certificate's start date",
      };
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
    case 'HOSTNAME_MISMATCH':
      return {
        what: 'the certificate was issued for another host name',
        hint: 'Use the host name the certificate names in the URL (not its IP address or an alias)',
      };
    case 'CERT_REVOKED':
      return { what: "the server's certificate is revoked", hint: "Renew the service's certificate" };
    default:
      if (code.startsWith('ERR_SSL_'))
        return {
          what: `the TLS handshake failed (${code})`,
          hint: "Check that the URL points at the service's https port and that it speaks TLS 1.2 or newer",
        };
      return {
        what: `the certificate is not trusted (${code})`,
        hint: 'If the service uses a private CA, pass that CA with --ca-file (or caFile in the config file)',
      };
  }
}

/** A one-line, header-free description of a network error (OpenSSL's messages end in a line break). */
function describeNetworkError(error: unknown, code: string | undefined): string {
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, ' ').trim();
  return scrub(code && !message.includes(code) ? `${code}: ${message}` : message);
}

/** Why an attempt was cut short by the client itself (not by the user). */
export type AttemptCut =
  | { readonly kind: 'deadline'; readonly ms: number }
  | { readonly kind: 'too-large'; readonly limit: number };

/** The failure of an attempt the client cut short: not retried (the same request would fare the same). */
export function classifyCut(ctx: ClassifyContext, cut: AttemptCut, method: string, path: string): Failure {
  const http = contextOf(ctx, method, path);
  switch (cut.kind) {
    case 'deadline':
      return {
        error: new UnavailableError(
          `${ctx.label} did not answer completely within ${cut.ms} ms (the request's overall deadline)`,
          http,
          {
            cause: { code: 'E_DEADLINE', method, path: http.path, deadlineMs: cut.ms },
            networkCode: 'E_DEADLINE',
            inDoubt: true,
            hint: 'The service answered too slowly; check that it is healthy, then re-run the command',
          },
        ),
        transient: false,
        networkCode: 'E_DEADLINE',
        detail: `deadline of ${cut.ms} ms`,
      };
    case 'too-large':
      return {
        error: new ApiError(
          { ...http, serviceMessage: `the answer is larger than the ${cut.limit}-byte cap of a JSON answer` },
          {
            transient: false,
            cause: { method, path: http.path, limit: cut.limit },
            hint: 'Check that the URL points at a Data Discovery Service API (a list page this large is not expected)',
          },
        ),
        transient: false,
      };
    default:
      return assertNever(cut, 'cut');
  }
}

/** Turn a thrown error (network, cancel) into a failure. `aborted`: the caller's signal fired. */
export function classifyThrown(
  ctx: ClassifyContext,
  error: unknown,
  method: string,
  path: string,
  aborted: boolean,
  canceled: boolean,
): Failure {
  if (aborted || canceled) return { error: new InterruptedError(), transient: false };
  const code = networkCodeOf(error);
  const description = describeNetworkError(error, code);
  const http = contextOf(ctx, method, path);
  // A failed TLS handshake sent nothing and a retry cannot help; OpenSSL's text stays in the cause.
  const tls = describeTlsFailure(code, ctx.baseUrl);
  // ECONNREFUSED and DNS failures never reached the service either; anything else may have.
  const inDoubt =
    tls === undefined && code !== 'ECONNREFUSED' && code !== 'ENOTFOUND' && code !== 'EAI_AGAIN';
  const message =
    tls === undefined
      ? `Cannot reach ${ctx.label} (${description})`
      : `Cannot reach ${ctx.label} securely: ${tls.what}`;
  return {
    error: new UnavailableError(message, http, {
      cause: { code, message: description, method, path: http.path },
      ...(code === undefined ? {} : { networkCode: code }),
      inDoubt,
      ...(tls === undefined ? {} : { hint: tls.hint }),
    }),
    transient: tls === undefined && code !== undefined && ctx.policy.networkCodes.includes(code),
    ...(code === undefined ? {} : { networkCode: code }),
    detail: description,
  };
}
