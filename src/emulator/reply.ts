/**
 * What every handler shares: the parsed request, the reply, the emulator's parts handlers need, and the
 * reply helpers (the success envelope real deployments use, the spec's error bodies).
 */
import type { AuthRefusal, PagingParameter, ProfileSourceStyle } from './deployment.js';
import type { MutableRecord } from './record.js';
import type { SessionTokens } from './session-tokens.js';
import type { MemoryStore } from './store.js';

/** What a handler answers; `server.ts` writes it (or a fault replaces it). */
export interface Reply {
  readonly status: number;
  /** JSON body. */
  readonly json?: unknown;
  /** Plain text body (401). */
  readonly text?: string;
  /** A streamed JSON body, produced chunk by chunk. */
  readonly stream?: () => Iterable<string>;
  readonly headers?: Readonly<Record<string, string>>;
  /** True when the request changed the store (persist before answering; record it). */
  readonly mutated?: boolean;
}

/** A parsed request. */
export interface RequestContext {
  readonly method: string;
  /** Decoded path segments below `/api/v1`. */
  readonly segments: readonly string[];
  readonly params: URLSearchParams;
  /** Parsed JSON body; undefined when there was none. */
  readonly body: unknown;
  /** The Authorization header value with any `Bearer ` prefix removed. */
  readonly credential: string | undefined;
}

/** What handlers need from the running emulator. */
export interface HandlerDeps {
  readonly store: MemoryStore;
  readonly record: MutableRecord;
  readonly sessions: SessionTokens;
  readonly settings: {
    readonly userToken: string;
    readonly maxPageSize: number;
    readonly defaultPageSize: number;
    readonly exportClearSecrets: boolean;
    readonly omitEmptyCases: boolean;
    /** Shape of the `ds-connection-test` answer. */
    readonly testAnswerShape: 'operationStatus' | 'success';
    /** Serve `scanner-status` and `credentials` (else 404). */
    readonly referencesApi: boolean;
    /** How a refused token is answered (see `deployment.ts`). */
    readonly authRefusal: AuthRefusal;
    /** The parameter lists honour for the start of a page. */
    readonly paging: PagingParameter;
    /** How profiles answer `dataSourceList`. */
    readonly profileSources: ProfileSourceStyle;
  };
}

/** A JSON object (not an array, not null). */
export function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** The success envelope real deployments use. */
export function envelope(data: unknown, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { status: 'success', statusCode: 200, data, message: null, ...extra };
}

/** 400 `{error}` (spec section 7). */
export function badRequest(error: string): Reply {
  return { status: 400, json: { error } };
}

/** 404 `{error}` (spec section 7). */
export function notFound(error: string): Reply {
  return { status: 404, json: { error } };
}

/** 500 with the spec's body `{status, message, errors}`. */
export function internalError(message: string): Reply {
  return {
    status: 500,
    json: {
      status: 'error',
      message: 'Internal Server Error',
      errors: [{ code: 'INTERNAL_ERROR', message }],
    },
  };
}

export function ok(json: unknown, mutated = false): Reply {
  return { status: 200, json, mutated };
}
