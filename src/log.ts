/**
 * The only importer of pino: records go to `--log-file` as JSON lines and, at the chosen level, to stderr
 * as readable lines. Every line passes pino's redaction and {@link scrub}: no header or secret reaches a log.
 */
import { createWriteStream, fchmodSync, fstatSync, openSync, type WriteStream } from 'node:fs';
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';
import type { pino } from 'pino';
import { UsageError } from './errors.js';
import { toFileWriteError } from './files.js';
import type { LogLevel } from './log-levels.js';
import { scrub } from './secrets.js';

export { LOG_LEVELS, type LogLevel } from './log-levels.js';

/** What the rest of the code sees of a logger: structured fields first, then the message. */
export interface Logger {
  trace(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  child(bindings: Record<string, unknown>): Logger;
  /** Flush and close the log file; a {@link FileWriteError} when it could not be written (a full disk). */
  close(): Promise<void>;
}

export interface LoggerOptions {
  /** For stderr (default `warn`); the file gets at least `debug`. */
  readonly level?: LogLevel;
  /** Created 0600. */
  readonly file?: string;
  readonly stderr?: NodeJS.WritableStream;
}

/** pino's number of each level: a record below the run's level is dropped before pino is loaded. */
const LEVEL_VALUES: Readonly<Record<LogLevel, number>> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Number.POSITIVE_INFINITY,
};
const LEVEL_NAMES: ReadonlyMap<number, string> = new Map(
  Object.entries(LEVEL_VALUES).map(([n, v]) => [v, n]),
);

// pino is loaded at the first record a run keeps: most runs at the default level write none.
const requirePino = createRequire(import.meta.url);

/** Paths pino censors whatever else happens. */
const REDACT_PATHS = [
  'authorization',
  'Authorization',
  'headers.authorization',
  'headers.Authorization',
  '*.headers.authorization',
  '*.headers.Authorization',
  'config.headers',
  '*.config.headers',
  'token',
  '*.token',
  'password',
  '*.password',
];

/** A Writable that renders pino JSON lines as `level: message key=value` for a human on stderr. */
function createHumanStream(target: NodeJS.WritableStream): Writable {
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      try {
        const record = JSON.parse(chunk.toString('utf8')) as Record<string, unknown>;
        const { level, msg, time: _t, pid: _p, hostname: _h, ...rest } = record;
        const extras = Object.entries(rest)
          .filter(([, v]) => v !== undefined && (typeof v !== 'object' || v === null))
          .map(([k, v]) => `${k}=${String(v)}`)
          .join(' ');
        const name = (typeof level === 'number' ? LEVEL_NAMES.get(level) : undefined) ?? 'log';
        target.write(`${name}: ${String(msg ?? '')}${extras ? ` (${extras})` : ''}\n`);
      } catch {
        target.write(chunk);
      }
      done();
    },
  });
}

/** The `--log-file` stream and the first error it met. */
interface LogFile {
  readonly stream: WriteStream;
  readonly path: string;
  failure: unknown;
}

/** A {@link Logger} over a pino logger made at its first kept record (`make`). */
class PinoLogger implements Logger {
  #inner: pino.Logger | undefined;

  constructor(
    private readonly make: () => pino.Logger,
    private readonly minLevel: number,
    private readonly file: LogFile | undefined,
  ) {}
  private get inner(): pino.Logger {
    this.#inner ??= this.make();
    return this.#inner;
  }
  #log(level: Exclude<LogLevel, 'fatal' | 'silent'>, fields: Record<string, unknown>, message: string): void {
    if (this.minLevel <= LEVEL_VALUES[level]) this.inner[level](fields, message);
  }
  readonly trace = (fields: Record<string, unknown>, message: string) => this.#log('trace', fields, message);
  readonly debug = (fields: Record<string, unknown>, message: string) => this.#log('debug', fields, message);
  readonly info = (fields: Record<string, unknown>, message: string) => this.#log('info', fields, message);
  readonly warn = (fields: Record<string, unknown>, message: string) => this.#log('warn', fields, message);
  readonly error = (fields: Record<string, unknown>, message: string) => this.#log('error', fields, message);
  child(bindings: Record<string, unknown>): Logger {
    return new PinoLogger(() => this.inner.child(bindings), this.minLevel, undefined);
  }
  close(): Promise<void> {
    const file = this.file;
    if (!file) return Promise.resolve();
    return new Promise<void>((resolve) => {
      if (file.stream.destroyed) resolve();
      else
        file.stream.end((error?: Error | null) => {
          if (error) file.failure ??= error;
          resolve();
        });
    }).then(() => {
      if (file.failure !== undefined) throw toFileWriteError(file.failure, file.path, 'log file');
    });
  }
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level: LogLevel = options.level ?? 'warn';
  const streams: pino.StreamEntry[] = [];
  if (level !== 'silent') {
    streams.push({ level, stream: createHumanStream(options.stderr ?? process.stderr) });
  }
  let file: LogFile | undefined;
  // The file is the record of a run a user sends in: debug at least.
  const fileLevel = level === 'trace' ? 'trace' : 'debug';
  if (options.file) {
    // Opened synchronously: a bad path is one usage error here, not an unhandled 'error' event later.
    let fd: number;
    try {
      fd = openSync(options.file, 'a', 0o600);
      // An existing log keeps its mode unless set here; `--log-file /dev/stderr` must not chmod a terminal.
      if (fstatSync(fd).isFile()) fchmodSync(fd, 0o600);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      throw new UsageError(`Cannot write the log file ${options.file} (${code})`, {
        hint: 'Check --log-file and that its folder exists',
        cause: error,
      });
    }
    const stream = createWriteStream(options.file, { fd });
    const logFile: LogFile = { stream, path: options.file, failure: undefined };
    // A failed write (a full disk) is remembered for close(), never an unhandled event (a "bug").
    stream.on('error', (error) => {
      logFile.failure ??= error;
    });
    file = logFile;
    streams.push({ level: fileLevel, stream });
  }
  const minLevel = streams.length === 0 ? 'silent' : file ? fileLevel : level;
  const make = (): pino.Logger => {
    const { pino } = requirePino('pino') as typeof import('pino');
    return pino(
      {
        level: minLevel,
        base: { pid: process.pid },
        redact: { paths: REDACT_PATHS, censor: '[redacted]' },
        hooks: { streamWrite: (line: string) => scrub(line) },
      },
      pino.multistream(
        streams.length > 0
          ? streams
          : [{ level: 'fatal', stream: new Writable({ write: (_c, _e, d) => d() }) }],
      ),
    );
  };
  return new PinoLogger(make, LEVEL_VALUES[minLevel], file);
}

export function createSilentLogger(): Logger {
  return createLogger({ level: 'silent' });
}
