/**
 * Typed errors of dds-migrate. Every error a user can see is a {@link DdsError}: it carries a stable
 * `code`, the contract's exit code, a hint that says what to do next, and the original `cause`.
 * Classification happens by type and HTTP status, never by matching message text.
 */
import type { Problem } from './model/problem.js';

/** Re-exported: most callers import it with the errors that carry it. */
export type { Problem } from './model/problem.js';

/** Exit codes of the contract (section 4). */
export const ExitCode = {
  ok: 0,
  partial: 1,
  usage: 2,
  validation: 3,
  auth: 4,
  unavailable: 5,
  bug: 70,
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export interface DdsErrorOptions {
  readonly hint?: string;
  readonly cause?: unknown;
}

/** Base class of every error meant for the user. */
export abstract class DdsError extends Error {
  abstract readonly code: string;
  abstract readonly exitCode: ExitCode;
  readonly hint: string | undefined;

  constructor(message: string, options: DdsErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.hint = options.hint;
  }

  /** The one line a user sees: the message, then the hint. */
  toUserLine(): string {
    if (!this.hint) return this.message;
    // A message that already ends a sentence ("Did you mean export?") takes no extra period.
    return /[.?!:]$/.test(this.message) ? `${this.message} ${this.hint}` : `${this.message}. ${this.hint}`;
  }
}

/** A bad flag, a missing argument, a wrong combination of options (exit 2). */
export class UsageError extends DdsError {
  readonly code = 'E_USAGE';
  readonly exitCode = ExitCode.usage;
}

/** A bad configuration file or environment (exit 2). */
export class ConfigError extends DdsError {
  readonly code = 'E_CONFIG';
  readonly exitCode = ExitCode.usage;
}

/** A malformed input file: snapshot, overrides, profile, journal (exit 2). `line` is 1-based. */
export class InputFileError extends DdsError {
  readonly code = 'E_INPUT';
  readonly exitCode = ExitCode.usage;
  readonly file: string;
  readonly line: number | undefined;

  constructor(file: string, line: number | undefined, message: string, options: DdsErrorOptions = {}) {
    super(line === undefined ? `${file}: ${message}` : `${file}:${line}: ${message}`, options);
    this.file = file;
    this.line = line;
  }
}

/**
 * A local file dds-migrate owns (journal, report, id map, log) could not be written: disk full,
 * permissions (exit 2). What was written before stays consistent; fixing the cause and re-running
 * resumes an import.
 */
export class FileWriteError extends DdsError {
  readonly code = 'E_FILE_WRITE';
  readonly exitCode = ExitCode.usage;
  readonly file: string;

  constructor(file: string, message: string, options: DdsErrorOptions = {}) {
    super(`${file}: ${message}`, options);
    this.file = file;
  }
}

/** Validation or pre-flight failed; nothing was written (exit 3). */
export class PreflightError extends DdsError {
  readonly code = 'E_PREFLIGHT';
  readonly exitCode = ExitCode.validation;
  readonly problems: readonly Problem[];

  constructor(message: string, problems: readonly Problem[] = [], options: DdsErrorOptions = {}) {
    super(message, options);
    this.problems = problems;
  }
}

/** The description of one HTTP exchange, without any header (so never a token). */
export interface HttpContext {
  readonly method: string;
  /** Path relative to the host, e.g. `/api/v1/ds-connections`, without the query string. */
  readonly path: string;
  readonly status?: number;
  /** The service's own error text (`error`, `message` or `errors[]`). */
  readonly serviceMessage?: string;
}

function describeHttp(ctx: HttpContext): string {
  const status = ctx.status === undefined ? '' : ` -> ${ctx.status}`;
  const said = ctx.serviceMessage ? `: ${ctx.serviceMessage}` : '';
  return `${ctx.method.toUpperCase()} ${ctx.path}${status}${said}`;
}

/** The service rejected the token: 401, also after one re-exchange (exit 4). */
export class AuthError extends DdsError {
  readonly code = 'E_AUTH';
  readonly exitCode = ExitCode.auth;
  readonly http: HttpContext | undefined;

  constructor(message: string, http?: HttpContext, options: DdsErrorOptions = {}) {
    super(http ? `${message} (${describeHttp(http)})` : message, {
      hint:
        options.hint ?? 'Check the token (tokenEnv / --token-file) and that it is valid for this environment',
      cause: options.cause,
    });
    this.http = http;
  }
}

/**
 * The statuses that are transient (the one definition: the client's retry policy and
 * `ApiError.isTransient()` both read it). 501 Not Implemented is not among them: it is definite.
 */
export const TRANSIENT_STATUSES: readonly number[] = [408, 429, 500, 502, 503, 504];

/**
 * The service answered with an error status. {@link ApiError.isTransient} tells whether the request was
 * certainly not applied (a definite answer: false) or may have been (a transient status of the retry
 * policy, an HTML 502: true): the importer reconciles the latter. `retryAfterMs` is the Retry-After the
 * service sent with it (429, 503), if any.
 */
export class ApiError extends DdsError {
  readonly code = 'E_API';
  readonly exitCode = ExitCode.partial;
  readonly http: HttpContext;
  readonly retryAfterMs: number | undefined;
  readonly #transient: boolean;

  constructor(
    http: HttpContext,
    options: DdsErrorOptions & { readonly transient?: boolean; readonly retryAfterMs?: number } = {},
  ) {
    super(describeHttp(http), options);
    this.http = http;
    this.retryAfterMs = options.retryAfterMs;
    // Transient by default when the status is, or absent (no answer).
    this.#transient =
      options.transient ?? (http.status === undefined || TRANSIENT_STATUSES.includes(http.status));
  }

  get status(): number | undefined {
    return this.http.status;
  }

  /**
   * Transient: a safe request may be sent again, a create is in doubt. The one definition is the retry
   * default policy's ({@link TRANSIENT_STATUSES}); the client passes its own policy's verdict.
   */
  isTransient(): boolean {
    return this.#transient;
  }
}

/** The default hint of {@link UnavailableError}: what any command can do. */
export const UNREACHABLE_HINT = 'Check that the service is reachable, then re-run the command';

/** The default hint of {@link InterruptedError}. */
export const INTERRUPTED_HINT = 'Re-run the command';

/**
 * No answer: connection refused, reset, timeout, DNS; or the service kept failing until the retry
 * budget ran out (exit 5). `inDoubt` is true when the request may have reached the service.
 */
export class UnavailableError extends DdsError {
  readonly code = 'E_UNAVAILABLE';
  readonly exitCode = ExitCode.unavailable;
  readonly http: HttpContext | undefined;
  /** Node network error code (ECONNREFUSED, ECONNRESET, ETIMEDOUT, ...) when there was one. */
  readonly networkCode: string | undefined;
  /**
   * True when the request may have reached the service (reset, timeout, 5xx): a create must be
   * reconciled by name before it is sent again. False when it certainly did not (connection refused).
   * Default true: when unsure, assume it may have been applied.
   */
  readonly inDoubt: boolean;

  constructor(
    message: string,
    http?: HttpContext,
    options: DdsErrorOptions & { readonly networkCode?: string; readonly inDoubt?: boolean } = {},
  ) {
    super(http ? `${message} (${describeHttp(http)})` : message, {
      hint: options.hint ?? UNREACHABLE_HINT,
      cause: options.cause,
    });
    this.http = http;
    this.networkCode = options.networkCode;
    this.inDoubt = options.inDoubt ?? true;
  }
}

/** The run was interrupted (Ctrl-C); in-flight work settled, journal consistent (exit 130). */
export class InterruptedError extends DdsError {
  readonly code = 'E_INTERRUPTED';
  readonly exitCode = ExitCode.interrupted;

  constructor(message = 'Interrupted', options: DdsErrorOptions = {}) {
    super(message, { ...options, hint: options.hint ?? INTERRUPTED_HINT });
  }
}

/** Some entries failed but the command finished (exit 1). Used by commands that report per-entry outcomes. */
export class PartialFailureError extends DdsError {
  readonly code = 'E_PARTIAL';
  readonly exitCode = ExitCode.partial;
}

/**
 * `error` as a command that resumes (import) reports it: an {@link UnavailableError} or
 * {@link InterruptedError} that carries its default hint gets "(an import resumes where it stopped)"
 * added, `command` naming the command. Any other error (or a specific hint, such as the TLS one) is
 * returned as it is. Only such a command may say it: a diff or a list starts again from the beginning.
 */
export function withResumeHint(error: unknown, command: string): unknown {
  const resumable =
    (error instanceof UnavailableError && error.hint === UNREACHABLE_HINT) ||
    (error instanceof InterruptedError && error.hint === INTERRUPTED_HINT);
  if (!resumable) return error;
  // A copy of the same class with every own property (message, stack, cause, http, ...), the hint extended.
  const copy = Object.assign(Object.create(Object.getPrototypeOf(error) as object) as DdsError, error);
  Object.defineProperty(copy, 'hint', { value: `${error.hint} (${command} resumes where it stopped)` });
  return copy;
}

export function isDdsError(error: unknown): error is DdsError {
  return error instanceof DdsError;
}

/**
 * A connection name that cannot be looked up by name (`.`, `..`, empty: the URL `/ds_connections/.`
 * is normalised to another path), so dds-migrate never creates it, and a look-up of it is this error,
 * not "absent". A definite, non-retryable {@link ApiError} without a status: the importer records the
 * entry as failed with this message, and never POSTs it.
 */
export class UnaddressableNameError extends ApiError {
  readonly entryName: string;

  constructor(method: string, path: string, name: string) {
    super(
      {
        method,
        path,
        serviceMessage: `the name '${name}' cannot be used: dds-migrate could not look it up by name afterwards (the URL would be normalised to another path); rename it (overrides)`,
      },
      { transient: false, hint: 'Rename the connection with an override' },
    );
    this.entryName = name;
  }
}

/** The default of a switch over every member of a union: a compile error when one is missed, a bug if reached. */
export function assertNever(value: never, what: string): never {
  throw new Error(`unhandled ${what} ${JSON.stringify(value)}`);
}
