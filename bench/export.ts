/**
 * Benchmark of `export` (goal: "the export body is parsed as a stream: memory must not grow with the
 * size of the environment"). For 10k, 50k and 100k connections:
 *
 * - a seed file is generated (`writeGeneratedSeed`, as `bench/gen-data.ts` does) and served by the
 *   emulator in a CHILD process (`dds-migrate emulator --port 0 --data FILE --json`), so the memory of
 *   the server holding the environment is not counted;
 * - the real command `dds-migrate export --from URL -o FILE --json` runs in another child
 *   (`bench/export-child.ts`, which calls `runCli` and reports `process.resourceUsage().maxRSS`), so its
 *   peak RSS is the export's alone.
 *
 * Figures per size (each size exported {@link REPEATS} times against the same emulator; the lowest peak
 * RSS and the fastest time are kept, since noise only adds to both): wall time, entries/s, peak RSS,
 * snapshot size. Baseline in the same run: the smallest size.
 *
 * Goal: from the smallest to the largest size, peak RSS grows by less than a third of the growth of the
 * snapshot. A design that held the export (or the snapshot) in memory grows at least as much as the
 * snapshot (JS objects cost several times their JSON). The streamed design keeps only the write index
 * (names, offsets, lengths: ~64 bytes per entry live, measured; the snapshot's lines are ~700 bytes),
 * and V8 lets the heap run to about twice its live data before a full collection, so its peak RSS grows
 * by ~150-200 bytes per connection: 20-30 % of the snapshot's growth. The two memory bugs this
 * benchmark found measured 222 % (names retaining the parser's chunks) and 50 % (a buffer per line).
 * The result is checked (exit 0, every entry written), not just timed.
 *
 * Run: `npm run build && node dist/bench/export.js [count ...]` (default 10000 50000 100000).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ExportChildResult } from './export-child.js';
import { writeGeneratedSeed } from './gen-data.js';

/** One measured export. */
export interface ExportRun {
  readonly count: number;
  readonly repeats: number;
  /** Fastest of the repeats. */
  readonly seconds: number;
  readonly entriesPerSecond: number;
  /** Lowest peak RSS of the repeats (what the run needs; noise only adds to a peak). */
  readonly peakRssMb: number;
  /** Highest peak RSS of the repeats. */
  readonly maxPeakRssMb: number;
  readonly startRssMb: number;
  readonly heapAfterGcMb: number | null;
  readonly snapshotMb: number;
  readonly correct: boolean;
}

/** What the benchmark reports. */
export interface ExportBenchResult {
  readonly name: 'export';
  readonly runs: readonly ExportRun[];
  /** Largest minus smallest size. */
  readonly snapshotGrowthMb: number;
  readonly rssGrowthMb: number;
  /** `rssGrowthMb / snapshotGrowthMb`. */
  readonly growthRatio: number;
  readonly goalRatio: number;
  readonly correct: boolean;
  readonly pass: boolean;
}

const GOAL_RATIO = 1 / 3;
const REPEATS = 3;
const TOKEN = 'bench-export-token';
const here = dirname(fileURLToPath(import.meta.url));
const MAIN = join(here, '..', 'src', 'cli', 'main.js');
const CHILD = join(here, 'export-child.js');

/** Start `dds-migrate emulator` in a child process; resolves with its URL once it listens. */
function startEmulatorProcess(seedPath: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [MAIN, 'emulator', '--port', '0', '--data', seedPath, '--token', TOKEN, '--json'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      try {
        // `--json` prints one (pretty-printed) object once the server listens.
        const info = JSON.parse(stdout) as { url: string };
        resolve({ url: info.url, child });
      } catch {
        // not complete yet
      }
    });
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
    });
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`emulator exited (${code}) before listening: ${stderr}`)));
  });
}

/** Stop the emulator child (SIGTERM: it closes and exits 0) and wait for it. */
function stopEmulatorProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Run the export command in its own process and read its figures. */
function runExportChild(url: string, out: string): Promise<ExportChildResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', CHILD, 'export', '--from', url, '-o', out, '--json'],
      { env: { ...process.env, DDS_SOURCE_TOKEN: TOKEN }, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`export child failed: ${stderr || error.message}`));
        else resolve(JSON.parse(stdout) as ExportChildResult);
      },
    );
  });
}

/** Generate `count` connections, serve them, export them, measure. */
async function measureExport(count: number, dir: string, repeats: number): Promise<ExportRun> {
  const seedPath = join(dir, `seed-${count}.json`);
  await writeGeneratedSeed({ count, seed: 1, out: seedPath });
  const snapshotPath = join(dir, `export-${count}.snapshot.jsonl`);
  const { url, child } = await startEmulatorProcess(seedPath);
  try {
    const results: ExportChildResult[] = [];
    let correct = true;
    let snapshotMb = Number.NaN;
    for (let i = 0; i < repeats; i++) {
      const r = await runExportChild(url, snapshotPath);
      results.push(r);
      let entryCount = -1;
      try {
        entryCount = (JSON.parse(r.stdout) as { entryCount: number }).entryCount;
      } catch {
        process.stderr.write(`export ${count}: exit ${r.exitCode}\n${r.stderr}`);
      }
      if (r.exitCode !== 0 || entryCount !== count) correct = false;
      else snapshotMb = statSync(snapshotPath).size / 1024 / 1024;
    }
    const seconds = Math.min(...results.map((r) => r.seconds));
    const lowest = results.reduce((a, b) => (b.peakRssMb < a.peakRssMb ? b : a));
    return {
      count,
      repeats,
      seconds,
      entriesPerSecond: count / seconds,
      peakRssMb: lowest.peakRssMb,
      maxPeakRssMb: Math.max(...results.map((r) => r.peakRssMb)),
      startRssMb: lowest.startRssMb,
      heapAfterGcMb: lowest.heapAfterGcMb,
      snapshotMb,
      correct,
    };
  } finally {
    await stopEmulatorProcess(child);
    rmSync(seedPath, { force: true });
    rmSync(snapshotPath, { force: true });
  }
}

/** Run the benchmark over `counts` (ascending; the first is the baseline). */
export async function runExportBench(
  counts: readonly number[] = [10_000, 50_000, 100_000],
  repeats = REPEATS,
): Promise<ExportBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'dds-bench-export-'));
  const runs: ExportRun[] = [];
  try {
    for (const count of counts) runs.push(await measureExport(count, dir, repeats));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const first = runs[0];
  const last = runs.at(-1);
  if (first === undefined || last === undefined) throw new Error('Expected at least one count');
  const snapshotGrowthMb = last.snapshotMb - first.snapshotMb;
  const rssGrowthMb = last.peakRssMb - first.peakRssMb;
  const growthRatio = rssGrowthMb / snapshotGrowthMb;
  const correct = runs.every((r) => r.correct);
  return {
    name: 'export',
    runs,
    snapshotGrowthMb,
    rssGrowthMb,
    growthRatio,
    goalRatio: GOAL_RATIO,
    correct,
    // A single size has no growth to judge: only correctness counts then.
    pass: correct && (runs.length < 2 || growthRatio < GOAL_RATIO),
  };
}

/** The figures as lines. */
export function formatExportBench(r: ExportBenchResult): string {
  const lines = r.runs.map(
    (run) =>
      `  ${String(run.count).padStart(7)} connections: ${run.seconds.toFixed(2)} s, ` +
      `${Math.round(run.entriesPerSecond)} entries/s, peak RSS ${run.peakRssMb.toFixed(1)} MB ` +
      `(up to ${run.maxPeakRssMb.toFixed(1)}; ${run.startRssMb.toFixed(1)} MB at start), ` +
      `snapshot ${run.snapshotMb.toFixed(1)} MB${run.correct ? '' : ' WRONG'}`,
  );
  const first = r.runs[0];
  const last = r.runs.at(-1);
  const factor = first && last ? last.count / first.count : 1;
  const repeats = first?.repeats ?? 0;
  return [
    `export (emulator in another process; the command in its own process; best of ${repeats} runs a size):`,
    ...lines,
    `  baseline: ${factor}x the connections, snapshot ${r.snapshotGrowthMb.toFixed(1)} MB bigger, ` +
      `peak RSS ${r.rssGrowthMb >= 0 ? '+' : ''}${r.rssGrowthMb.toFixed(1)} MB ` +
      `= ${(r.growthRatio * 100).toFixed(1)} % of the snapshot growth (goal < ${(r.goalRatio * 100).toFixed(0)} %), ` +
      `${Math.round((r.rssGrowthMb * 1024 * 1024) / ((last?.count ?? 0) - (first?.count ?? 0)))} bytes per added connection`,
    `  result ${r.correct ? 'correct' : 'WRONG'}`,
    r.pass ? 'PASS' : 'FAIL',
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  const counts = args.length === 0 ? undefined : args.map(Number);
  if (counts?.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`Expected counts to be integers >= 1, got ${args.join(' ')}`);
  const result = await runExportBench(counts);
  process.stdout.write(`${formatExportBench(result)}\n`);
  process.exitCode = result.pass ? 0 : 1;
}
