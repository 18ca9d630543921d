/** What a command receives: the process's streams and environment (injected, so tests run in-process). */
import type { Logger, LogLevel } from '../log.js';
import { scrub } from '../secrets.js';

/** A writable with the TTY facts a renderer needs. */
export type TextStream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

/** The outside world of one CLI run. */
export interface CliIo {
  readonly stdout: TextStream;
  readonly stderr: TextStream;
  readonly stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  /** Aborted on the first Ctrl-C (SIGINT): stop starting work, let in-flight requests settle. */
  readonly signal?: AbortSignal;
}

export interface GlobalOptions {
  /** `--config` as given (loadConfig falls back to `$DDS_MIGRATE_CONFIG`, then the default file). */
  readonly config: string | undefined;
  readonly logLevel: LogLevel;
  readonly logFile: string | undefined;
  readonly json: boolean;
  /** Only errors on stderr (`--json` results still carry every warning). */
  readonly quiet: boolean;
  /** Every warning on its own line, not collapsed into counts. */
  readonly verbose: boolean;
  /** Progress bars allowed (still only on a TTY). */
  readonly progress: boolean;
}

/** Results to stdout, the rest to stderr; every line scrubbed of registered secrets. */
export interface Output {
  result(text: string): void;
  json(value: unknown): void;
  /** Raw text on stdout without an added newline (streamed formats). */
  write(text: string): void;
  /** A line on stderr, hidden by `--quiet`. */
  info(text: string): void;
  warn(text: string): void;
  readonly stdoutIsTTY: boolean;
  readonly stderrIsTTY: boolean;
  /** stderr is a TTY, and not --quiet, --no-progress or --json. */
  readonly showProgress: boolean;
}

/** Everything a command's `run` gets besides its own arguments. */
export interface CliContext {
  readonly io: CliIo;
  readonly globals: GlobalOptions;
  readonly log: Logger;
  readonly out: Output;
  readonly signal: AbortSignal;
}

export function createOutput(io: CliIo, globals: GlobalOptions): Output {
  const stderrIsTTY = io.stderr.isTTY === true;
  return {
    result(text) {
      io.stdout.write(`${scrub(text)}\n`);
    },
    json(value) {
      io.stdout.write(`${scrub(JSON.stringify(value, null, 2))}\n`);
    },
    write(text) {
      io.stdout.write(scrub(text));
    },
    info(text) {
      if (!globals.quiet) io.stderr.write(`${scrub(text)}\n`);
    },
    warn(text) {
      if (!globals.quiet) io.stderr.write(`warning: ${scrub(text)}\n`);
    },
    stdoutIsTTY: io.stdout.isTTY === true,
    stderrIsTTY,
    showProgress: stderrIsTTY && globals.progress && !globals.quiet && !globals.json,
  };
}
