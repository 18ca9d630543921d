#!/usr/bin/env node
/**
 * The process entry point and the only caller of `process.exit`. The first Ctrl-C aborts the run's signal
 * (commands stop starting work, let in-flight requests settle, and exit 130); a second one exits at once.
 */
import { ExitCode } from '../errors.js';
import { writeShortWritesWhole } from '../files.js';
import { limitHeapGrowth } from './heap.js';
import { finishStdout, reportUncaught } from './report-error.js';
import { runCli } from './run-cli.js';

limitHeapGrowth(process.argv.slice(2));

const controller = new AbortController();
let interrupts = 0;
const onSignal = (): void => {
  interrupts += 1;
  if (interrupts === 1) {
    // Abort first: a progress bar stops and clears its line on the abort, so this line is not drawn over.
    controller.abort();
    process.stderr.write('\nInterrupted: letting in-flight requests settle (Ctrl-C again to exit now)\n');
  } else {
    process.exit(ExitCode.interrupted);
  }
};
// An error that escapes every handler is a bug: reported scrubbed, never by Node's default printer,
// which inspects the whole error (an axios error's config holds the Authorization header).
const onUncaught = (error: unknown): void => {
  process.exitCode = reportUncaught(error, process.stderr);
  process.stderr.write('', () => process.exit(ExitCode.bug));
};
process.on('uncaughtException', onUncaught);
process.on('unhandledRejection', onUncaught);
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

// A failing stdout is watched here, not left to an unhandled 'error' event (a bug's exit): see finishStdout.
let stdoutFailure: unknown;
process.stdout.on('error', (error) => {
  stdoutFailure ??= error;
});
// A stderr that is gone (`2>&1 | head`) leaves nowhere to report anything: the exit code still says it.
process.stderr.on('error', () => undefined);
writeShortWritesWhole(process.stdout);

const code = await runCli(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
  cwd: process.cwd(),
  signal: controller.signal,
});
// Let stdout drain before exiting, then judge how it went (a pipe closed by the reader is not an error).
process.stdout.write('', (error) => {
  const failure = stdoutFailure ?? error ?? undefined;
  const final = failure === undefined ? code : finishStdout(failure, code, process.stderr);
  process.stderr.write('', () => process.exit(final));
});
