/**
 * Run the CLI in-process, as a user would from a shell, and capture what it printed:
 * `runCli(argv) -> { stdout, stderr, exitCode }` (wrangler's `runWrangler`).
 */
import { PassThrough } from 'node:stream';
import { runCli as runCliInProcess } from '../../src/cli/run-cli.js';

export interface CliRun {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}

export interface CliRunOptions {
  /** Environment variables seen by the CLI (nothing of process.env leaks in unless passed). */
  readonly env?: Record<string, string | undefined>;
  readonly cwd?: string;
  /** Text on stdin. */
  readonly stdin?: string;
  readonly stdinIsTTY?: boolean;
  /** Pretend stdout/stderr are terminals. */
  readonly tty?: boolean;
  readonly signal?: AbortSignal;
  /** Called with each chunk the CLI writes to stderr, as it is written (e.g. to press Ctrl-C at a point). */
  readonly onStderr?: (text: string) => void;
}

function capture(tty: boolean): {
  stream: PassThrough & { isTTY?: boolean; columns?: number };
  text: () => string;
} {
  const stream = new PassThrough() as PassThrough & { isTTY?: boolean; columns?: number };
  stream.isTTY = tty;
  stream.columns = 120;
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** Run `dds-migrate <argv>` in-process. */
export async function runCli(argv: readonly string[], options: CliRunOptions = {}): Promise<CliRun> {
  const out = capture(options.tty ?? false);
  const err = capture(options.tty ?? false);
  const onStderr = options.onStderr;
  if (onStderr) err.stream.on('data', (c: Buffer) => onStderr(c.toString('utf8')));
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
  stdin.isTTY = options.stdinIsTTY ?? false;
  stdin.end(options.stdin ?? '');
  const exitCode = await runCliInProcess(argv, {
    stdout: out.stream,
    stderr: err.stream,
    stdin,
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  await new Promise((resolve) => setImmediate(resolve));
  return { stdout: out.text(), stderr: err.text(), exitCode };
}
