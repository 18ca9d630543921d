/** How an error reaches the user: a {@link DdsError} as one line, anything else as a bug (exit 70). */
import { DdsError, ExitCode } from '../errors.js';
import { toFileWriteError } from '../files.js';
import { scrub } from '../secrets.js';
import { TOOL_NAME, TOOL_VERSION } from '../version.js';
import type { CliIo } from './context.js';

/** Print the one line a user sees for an error, and return its exit code. */
export function reportError(error: unknown, io: CliIo, debug: boolean): ExitCode {
  if (error instanceof DdsError) {
    io.stderr.write(`error: ${scrub(error.toUserLine())}\n`);
    if (debug && error.stack) io.stderr.write(`${scrub(error.stack)}\n`);
    return error.exitCode;
  }
  return reportUncaught(error, io.stderr);
}

/**
 * Report a bug: "this is a bug" and the stack only, scrubbed (exit 70). Never `util.inspect` (Node's
 * default): it shows every property, and an axios error's `config.headers` holds the Authorization header.
 */
export function reportUncaught(error: unknown, stderr: NodeJS.WritableStream): ExitCode {
  const stack =
    error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : describeNonError(error);
  stderr.write(
    `error: this is a bug in ${TOOL_NAME} ${TOOL_VERSION}; please report it with the lines below.\n${scrub(stack)}\n`,
  );
  return ExitCode.bug;
}

/** A thrown non-Error, by its type only: its fields could be anything, a request config included. */
function describeNonError(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === null || typeof value !== 'object') return String(value);
  return `a thrown ${value.constructor?.name ?? 'object'} (not an Error)`;
}

/**
 * The exit code of a run whose stdout failed: a closed pipe (EPIPE, `| head -1`) keeps the command's
 * code; any other failure (ENOSPC, EIO) lost output a script relies on: exit 2, if it did not fail already.
 */
export function finishStdout(failure: unknown, code: ExitCode, stderr: NodeJS.WritableStream): ExitCode {
  if ((failure as NodeJS.ErrnoException | undefined)?.code === 'EPIPE') return code;
  if (code !== ExitCode.ok && code !== ExitCode.partial) return code;
  const error = toFileWriteError(failure, 'standard output', 'output');
  const line = error instanceof DdsError ? error.toUserLine() : 'standard output: cannot write the output';
  stderr.write(`error: ${scrub(line)}\n`);
  return ExitCode.usage;
}

/** A stack trace is shown only at `--log-level debug` (or trace). */
export function wantsStack(argv: readonly string[], io: CliIo): boolean {
  const verbose = (level: string | undefined) => level === 'debug' || level === 'trace';
  const i = argv.indexOf('--log-level');
  if (i >= 0 && verbose(argv[i + 1])) return true;
  if (argv.some((a) => a === '--log-level=debug' || a === '--log-level=trace')) return true;
  return verbose(io.env.DDS_MIGRATE_LOG_LEVEL);
}
