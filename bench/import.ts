/**
 * Benchmark of `import` against the emulator (latency 50 ms), through the real CLI in-process:
 *
 * 1. Concurrency 1, 4, 8, 16 without a rate limit: throughput, its ratio to Little's bound
 *    (concurrency / latency) and the speedup over concurrency 1. Goal: ratio >= 0.9 at c = 8.
 * 2. A server limit of 20 req/s:
 *    - with `--rate 20`: goal 429s <= 1 % of requests and wall time <= 1.1 N/R;
 *    - without `--rate` (adaptive AIMD): goal 429s <= 5 % and steady throughput >= 0.8 R.
 *
 * Throughput is measured on the POST phase (first POST sent to last create applied, from the
 * emulator's record): that is what concurrency governs. The whole command's wall time (snapshot read,
 * target listing, journal) is printed beside it. Prints PASS/FAIL per goal.
 *
 * Run: `npm run build && node dist/bench/import.js [connections]` (default 2000).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { runCli } from '../src/cli/run-cli.js';
import { generateConnections } from '../src/emulator/generate.js';
import { type RunningEmulator, startEmulator } from '../src/emulator/index.js';
import type { Connection } from '../src/model/connection.js';
import { fixturesDir } from '../src/paths.js';
import { createSnapshotHeader } from '../src/snapshot/format.js';
import { writeSnapshot } from '../src/snapshot/write.js';

const LATENCY_MS = 50;
const LIMIT_RPS = 20;

/** One measured import. */
export interface ImportRun {
  readonly label: string;
  readonly count: number;
  readonly concurrency: number;
  readonly exitCode: number;
  readonly wallSeconds: number;
  /** Creates per second during the POST phase. */
  readonly throughput: number;
  /** Creates per second over the second half of the POST phase (adaptive runs). */
  readonly steadyThroughput: number;
  readonly requests: number;
  readonly rateLimited: number;
  readonly duplicates: number;
}

/** One goal and whether it was met. */
export interface ImportGoal {
  readonly goal: string;
  readonly value: string;
  readonly pass: boolean;
}

/** What {@link runImportBench} returns. */
export interface ImportBenchResult {
  readonly name: 'import';
  readonly runs: readonly ImportRun[];
  readonly goals: readonly ImportGoal[];
  readonly pass: boolean;
}

const sink = () =>
  new Writable({
    write(_c, _e, done) {
      done();
    },
  });

async function measure(
  label: string,
  snapshot: string,
  entries: readonly Connection[],
  dir: string,
  emulator: { latencyMs: number; rateLimit?: number },
  concurrency: number,
  extra: readonly string[] = [],
): Promise<ImportRun> {
  const emu: RunningEmulator = await startEmulator({
    // A new recovery site: no connections, but the scanners and stored credentials the generated
    // sources name (the import's references pre-flight checks them).
    data: join(fixturesDir(), 'environments', 'empty.json'),
    latencyMs: emulator.latencyMs,
    // The figures below read every request and create: keep them all, however large the run.
    maxRecordedRequests: Number.MAX_SAFE_INTEGER,
    ...(emulator.rateLimit === undefined ? {} : { rateLimit: emulator.rateLimit }),
  });
  try {
    const started = performance.now();
    const exitCode = await runCli(
      [
        'import',
        snapshot,
        '--to',
        emu.url,
        '--journal',
        join(dir, `${label.replace(/\W+/g, '-')}.journal.jsonl`),
        '--concurrency',
        String(concurrency),
        '--no-progress',
        '--quiet',
        ...extra,
      ],
      { stdout: sink(), stderr: sink(), env: { DDS_TARGET_TOKEN: emu.token }, cwd: dir },
    );
    const wallSeconds = (performance.now() - started) / 1000;
    const posts = emu.record.requests.filter((r) => r.method === 'POST');
    const creates = emu.record.creates;
    const first = posts[0]?.at ?? 0;
    const last = creates[creates.length - 1]?.at ?? first;
    const phase = Math.max(0.001, (last - first + LATENCY_MS) / 1000);
    const mid = first + (last - first) / 2;
    const secondHalf = creates.filter((c) => c.at >= mid).length;
    const duplicates = entries.filter((e) => emu.record.createCount(e.name) > 1).length;
    return {
      label,
      count: entries.length,
      concurrency,
      exitCode,
      wallSeconds,
      throughput: creates.length / phase,
      steadyThroughput: secondHalf / Math.max(0.001, (last - mid) / 1000),
      requests: emu.record.requests.length,
      rateLimited: emu.record.requests.filter((r) => r.status === 429).length,
      duplicates,
    };
  } finally {
    await emu.close();
  }
}

async function makeSnapshot(dir: string, count: number): Promise<{ path: string; entries: Connection[] }> {
  const entries = generateConnections(count, { seed: 42 }).map(({ _id, ...rest }) => rest as Connection);
  const path = join(dir, `gen-${count}.snapshot.jsonl`);
  const header = createSnapshotHeader({
    tool: 'dds-migrate bench',
    source: { url: 'https://bench.example.com', environment: 'bench' },
  });
  await writeSnapshot({ path }, header, entries);
  return { path, entries };
}

/** Run the benchmark; `print` receives the report lines. */
export async function runImportBench(
  options: {
    readonly count?: number;
    readonly c1Count?: number;
    readonly limitedCount?: number;
    readonly print?: (line: string) => void;
  } = {},
): Promise<ImportBenchResult> {
  const print = options.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const count = options.count ?? 2000;
  // Concurrency 1 at 50 ms is 20 creates/s: 2,000 would take 100 s alone. Throughput is a rate, so
  // fewer connections measure it as well; likewise for the rate-limited runs (N/R seconds each).
  const c1Count = options.c1Count ?? Math.min(count, 400);
  const limitedCount = options.limitedCount ?? Math.min(count, 600);
  const dir = mkdtempSync(join(tmpdir(), 'dds-bench-import-'));
  const runs: ImportRun[] = [];
  try {
    const big = await makeSnapshot(dir, count);
    const c1 = c1Count === count ? big : await makeSnapshot(dir, c1Count);
    const limited = limitedCount === count ? big : await makeSnapshot(dir, limitedCount);

    print(`import benchmark: emulator latency ${LATENCY_MS} ms`);
    print(`concurrency runs: ${count} connections (concurrency 1: ${c1Count}, to keep the bench short)`);
    print('');
    print('  c    N     wall s   POST-phase/s   Little bound/s   ratio   speedup   429s   dup');
    for (const c of [1, 4, 8, 16]) {
      const snap = c === 1 ? c1 : big;
      const run = await measure(`c${c}`, snap.path, snap.entries, dir, { latencyMs: LATENCY_MS }, c);
      runs.push(run);
      const bound = c / (LATENCY_MS / 1000);
      const base = runs[0]?.throughput ?? run.throughput;
      print(
        `  ${String(c).padStart(2)}  ${String(run.count).padStart(5)}  ${run.wallSeconds.toFixed(1).padStart(7)}  ${run.throughput.toFixed(1).padStart(13)}  ${bound.toFixed(0).padStart(15)}  ${(run.throughput / bound).toFixed(2).padStart(6)}  ${(run.throughput / base).toFixed(2).padStart(7)}x  ${String(run.rateLimited).padStart(5)}  ${run.duplicates}`,
      );
    }

    print('');
    print(
      `server limit ${LIMIT_RPS} req/s (token bucket, burst ${LIMIT_RPS}), ${limitedCount} connections, concurrency 8`,
    );
    const withRate = await measure(
      'rate',
      limited.path,
      limited.entries,
      dir,
      { latencyMs: LATENCY_MS, rateLimit: LIMIT_RPS },
      8,
      ['--rate', String(LIMIT_RPS)],
    );
    runs.push(withRate);
    const ideal = limitedCount / LIMIT_RPS;
    print(
      `  --rate ${LIMIT_RPS}:   wall ${withRate.wallSeconds.toFixed(1)} s (N/R = ${ideal.toFixed(1)} s, ${(withRate.wallSeconds / ideal).toFixed(3)} x), 429s ${withRate.rateLimited}/${withRate.requests} (${((100 * withRate.rateLimited) / withRate.requests).toFixed(2)} %), duplicates ${withRate.duplicates}`,
    );
    const adaptive = await measure(
      'adaptive',
      limited.path,
      limited.entries,
      dir,
      { latencyMs: LATENCY_MS, rateLimit: LIMIT_RPS },
      8,
    );
    runs.push(adaptive);
    print(
      `  adaptive:   wall ${adaptive.wallSeconds.toFixed(1)} s, steady ${adaptive.steadyThroughput.toFixed(1)} creates/s (${(adaptive.steadyThroughput / LIMIT_RPS).toFixed(2)} R), overall ${adaptive.throughput.toFixed(1)}/s, 429s ${adaptive.rateLimited}/${adaptive.requests} (${((100 * adaptive.rateLimited) / adaptive.requests).toFixed(2)} %), duplicates ${adaptive.duplicates}`,
    );

    const c8 = runs.find((r) => r.label === 'c8');
    const ratio8 = c8 ? c8.throughput / (8 / (LATENCY_MS / 1000)) : 0;
    const goals: ImportGoal[] = [
      { goal: 'ratio to Little bound at c = 8 >= 0.9', value: ratio8.toFixed(2), pass: ratio8 >= 0.9 },
      {
        goal: `--rate ${LIMIT_RPS}: 429s <= 1 %`,
        value: `${((100 * withRate.rateLimited) / withRate.requests).toFixed(2)} %`,
        pass: withRate.rateLimited <= 0.01 * withRate.requests,
      },
      {
        goal: `--rate ${LIMIT_RPS}: wall <= 1.1 N/R`,
        value: `${(withRate.wallSeconds / ideal).toFixed(3)} N/R`,
        pass: withRate.wallSeconds <= 1.1 * ideal,
      },
      {
        goal: 'adaptive: 429s <= 5 %',
        value: `${((100 * adaptive.rateLimited) / adaptive.requests).toFixed(2)} %`,
        pass: adaptive.rateLimited <= 0.05 * adaptive.requests,
      },
      {
        goal: 'adaptive: steady throughput >= 0.8 R',
        value: `${(adaptive.steadyThroughput / LIMIT_RPS).toFixed(2)} R`,
        pass: adaptive.steadyThroughput >= 0.8 * LIMIT_RPS,
      },
      {
        goal: 'every run: exit 0, no duplicate',
        value: runs.map((r) => `${r.exitCode}/${r.duplicates}`).join(' '),
        pass: runs.every((r) => r.exitCode === 0 && r.duplicates === 0),
      },
    ];
    print('');
    for (const g of goals) print(`  ${g.pass ? 'PASS' : 'FAIL'}  ${g.goal}: ${g.value}`);
    print(
      `  load average at the end: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    return { name: 'import', runs, goals, pass: goals.every((g) => g.pass) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const invokedDirectly =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  const arg = process.argv[2];
  const result = await runImportBench(arg === undefined ? {} : { count: Number(arg) });
  process.exitCode = result.pass ? 0 : 1;
}
