/**
 * Bench-only entry of `bench/export.ts`: runs `dds-migrate <argv>` in-process through `runCli` (the very
 * code path of the command) and prints one JSON line with the exit code, wall time and the process's
 * peak RSS. It runs alone in its own process, so the peak RSS is the CLI's and nothing else's: the
 * emulator serving the export runs in another process, and the parent only generates data.
 *
 * Run by the benchmark: `node dist/bench/export-child.js export --from URL -o FILE --json` with the token
 * in `DDS_SOURCE_TOKEN`.
 */
import { pathToFileURL } from 'node:url';
import { runCli } from '../src/cli/run-cli.js';
import { collect } from './capture.js';

/** What the child prints (one JSON line on stdout). */
export interface ExportChildResult {
  readonly exitCode: number;
  /** Wall time of `runCli`, seconds. */
  readonly seconds: number;
  /** `process.resourceUsage().maxRSS` at the end, MB. */
  readonly peakRssMb: number;
  /** RSS after the modules were loaded, before the command ran: the floor every run pays. */
  readonly startRssMb: number;
  /** Heap in use after a full GC at the end (needs `--expose-gc`): what the run left behind. */
  readonly heapAfterGcMb: number | null;
  /** The command's stdout and stderr (small: `--json` summary, warnings). */
  readonly stdout: string;
  readonly stderr: string;
}

/** Run the CLI with `argv` and measure it. */
export async function measureCli(argv: readonly string[]): Promise<ExportChildResult> {
  const startRssMb = process.memoryUsage().rss / 1024 / 1024;
  const out = collect();
  const err = collect();
  const started = performance.now();
  const exitCode = await runCli([...argv], {
    stdout: out.stream,
    stderr: err.stream,
    env: process.env,
    cwd: process.cwd(),
  });
  const seconds = (performance.now() - started) / 1000;
  const peakRssMb = process.resourceUsage().maxRSS / 1024;
  const gc = (globalThis as { gc?: () => void }).gc;
  let heapAfterGcMb: number | null = null;
  if (gc !== undefined) {
    gc();
    heapAfterGcMb = process.memoryUsage().heapUsed / 1024 / 1024;
  }
  return { exitCode, seconds, peakRssMb, startRssMb, heapAfterGcMb, stdout: out.text(), stderr: err.text() };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await measureCli(process.argv.slice(2));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
