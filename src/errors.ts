/** Typed errors with a stable `code`, the contract's exit code, a hint and a `cause`: classify by type. */
import type { Problem } from './model/problem.js';

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

/** A local file (journal, report, log) could not be written: disk full, permissions (exit 2). */
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

/** The transient statuses, for the retry policy and `ApiError.isTransient()`; 501 is definite. */
export const TRANSIENT_STATUSES: readonly number[] = [408, 429, 500, 502, 503, 504];

/** The service answered with an error status; {@link ApiError.isTransient}: it may have applied it. */
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
    this.#transient =
      options.transient ?? (http.status === undefined || TRANSIENT_STATUSES.includes(http.status));
  }

  get status(): number | undefined {
    return this.http.status;
  }

  /** A safe request may be sent again; a create is in doubt. */
  isTransient(): boolean {
    return this.#transient;
  }
}

const UNREACHABLE_HINT = 'Check that the service is reachable, then re-run the command';

const INTERRUPTED_HINT = 'Re-run the command';

/** No answer (refused, reset, timeout, DNS), or the retry budget ran out (exit 5). */
export class UnavailableError extends DdsError {
  readonly code = 'E_UNAVAILABLE';
  readonly exitCode = ExitCode.unavailable;
  readonly http: HttpContext | undefined;
  readonly networkCode: string | undefined;
  /** The request may have reached the service: a create is looked up by name before it is sent again. */
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

/** Some entries failed but the command finished (exit 1). */
export class PartialFailureError extends DdsError {
  readonly code = 'E_PARTIAL';
  readonly exitCode = ExitCode.partial;
}

/** `error` with "(<command> resumes where it stopped)" added to a default hint (import, not diff). */
export function withResumeHint(error: unknown, command: string): unknown {
  const resumable =
    (error instanceof UnavailableError && error.hint === UNREACHABLE_HINT) ||
    (error instanceof InterruptedError && error.hint === INTERRUPTED_HINT);
  if (!resumable) return error;
  // Every own property, `message` and `stack` too (not enumerable: a spread or Object.assign drops them).
  const copy = Object.create(
    Object.getPrototypeOf(error) as object,
    Object.getOwnPropertyDescriptors(error),
  ) as DdsError;
  Object.defineProperty(copy, 'hint', { value: `${error.hint} (${command} resumes where it stopped)` });
  return copy;
}

export function isDdsError(error: unknown): error is DdsError {
  return error instanceof DdsError;
}

/** A name never created: it cannot be looked up (`.`, `..`, empty); a definite {@link ApiError}, no status. */
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

/** The default of an exhaustive switch: a compile error when a member is missed, a bug if reached. */
export function assertNever(value: never, what: string): never {
  throw new Error(`unhandled ${what} ${JSON.stringify(value)}`);
}
