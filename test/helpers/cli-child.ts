/**
 * The built CLI as a child process, for the crash tests (`npm test` builds first): started with only
 * PATH and the given variables in its environment, its stdout and stderr collected together. Every
 * child still running is killed (SIGKILL) by {@link killRunningChildren}: call it in `afterEach`, so a
 * failed assertion leaves no CLI behind.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { BUILT_CLI } from './built-cli.js';

/** A running (or exited) CLI child. */
export interface CliChild {
  readonly process: ChildProcess;
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Its stdout and stderr so far. */
  output(): string;
}

const running = new Set<CliChild>();

/** Start `dds-migrate ARGS` with `env` (and PATH) as its whole environment. */
export function startCliChild(args: readonly string[], env: Record<string, string>): CliChild {
  const child = spawn(process.execPath, [BUILT_CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  const started: CliChild = { process: child, exit, output: () => out };
  running.add(started);
  void exit.then(() => running.delete(started));
  return started;
}

/** SIGKILL every child still running and wait for each to be gone. */
export async function killRunningChildren(): Promise<void> {
  const children = [...running];
  for (const child of children) child.process.kill('SIGKILL');
  await Promise.all(children.map((child) => child.exit));
}

/** Resolve once `done()` holds (looked at every 5 ms), or the child has exited. */
export async function waitUntil(child: CliChild, done: () => boolean): Promise<void> {
  let exited = false;
  void child.exit.then(() => {
    exited = true;
  });
  while (!exited && !done()) await new Promise((r) => setTimeout(r, 5));
}
