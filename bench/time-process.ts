/**
 * One process, timed from the outside: `/usr/bin/time -v` runs it and reports its peak RSS ("Maximum
 * resident set size"); the wall time is measured here, from spawn to exit (the same `time` wrapper
 * around every process compared, so its own cost cancels out in a ratio).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/** GNU time, which reports a child's peak RSS. */
export const GNU_TIME = '/usr/bin/time';

/** What one timed process did. */
export interface TimedProcess {
  readonly exitCode: number | null;
  readonly seconds: number;
  /** Peak RSS in MB, from `/usr/bin/time -v`; NaN when it is not installed. */
  readonly peakRssMb: number;
  readonly stdout: string;
  /** The process's own stderr, without time's report. */
  readonly stderr: string;
  /** `Date.now()` when it was spawned. */
  readonly startedAt: number;
}

/** Run `command args` under `/usr/bin/time -v` (when installed) and measure it. */
export function timeProcess(
  command: string,
  args: readonly string[],
  options: { readonly env?: NodeJS.ProcessEnv; readonly cwd?: string } = {},
): Promise<TimedProcess> {
  const withTime = existsSync(GNU_TIME);
  const [file, argv] = withTime ? [GNU_TIME, ['-v', command, ...args]] : [command, [...args]];
  return new Promise((resolve, reject) => {
    const startedAt = Date.now();
    const started = performance.now();
    const child = spawn(file, argv, {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
    });
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = (performance.now() - started) / 1000;
      // time -v appends its report to stderr: "\tCommand being timed: ..." and the figures.
      const report = withTime ? stderr.lastIndexOf('\tCommand being timed:') : -1;
      const own = report >= 0 ? stderr.slice(0, report) : stderr;
      const rss = /Maximum resident set size \(kbytes\): (\d+)/.exec(stderr.slice(Math.max(0, report)));
      const status = /Exit status: (\d+)/.exec(stderr.slice(Math.max(0, report)));
      resolve({
        exitCode: status ? Number(status[1]) : code,
        seconds,
        peakRssMb: rss && report >= 0 ? Number(rss[1]) / 1024 : Number.NaN,
        stdout,
        stderr: own,
        startedAt,
      });
    });
  });
}

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return Number.NaN;
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}
