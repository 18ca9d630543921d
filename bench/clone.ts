/**
 * Benchmark of the clone a user tries first, each step a process of its own timed from the outside
 * (`bench/time-process.ts`: wall from spawn to exit, peak RSS from `/usr/bin/time -v`), start-up
 * included:
 *
 * 1. `dds-migrate export` of N connections (default 2 000) from a source emulator without latency;
 * 2. `dds-migrate import` of that snapshot, `--concurrency 8`, into an empty target answering in 50 ms
 *    (no jitter), beside its baselines in the same run: Little's bound (N x latency / concurrency: no
 *    client can do better) and a bare node:http POST loop with the same concurrency
 *    (`bench/bare-post-loop.ts`, a process that loads nothing of dds-migrate: what the machine and the
 *    emulator allow now).
 *
 * The emulators run in this process (a fresh empty target for each import and each bare loop), so the
 * time to the first POST is read from the target's record. In rounds: each round runs the export, the
 * bare loop and the import once, so a busy moment of the shared machine slows a round of each alike;
 * each figure is the median of its rounds (peak RSS: the highest is printed too).
 *
 * Goals: import >= 0.94 of Little's bound end to end; peak RSS of the import <= 90 MB, of the export
 * <= 80 MB.
 *
 * Run: `npm run build && node dist/bench/clone.js [--connections N] [--rounds R]` (default 2000, 3), or
 * `npm run bench -- clone`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type RunningEmulator, startEmulator } from '../src/emulator/index.js';
import { fixturesDir } from '../src/paths.js';
import { median, type TimedProcess, timeProcess } from './time-process.js';

const here = dirname(fileURLToPath(import.meta.url));
const MAIN = join(here, '..', 'src', 'cli', 'main.js');
const BARE = join(here, 'bare-post-loop.js');
const EMPTY = join(fixturesDir(), 'environments', 'empty.json');

const CONCURRENCY = 8;
const LATENCY_MS = 50;
const BOUND_RATIO_GOAL = 0.94;
const IMPORT_RSS_GOAL_MB = 90;
const EXPORT_RSS_GOAL_MB = 80;

/** One timed process and when the target saw its first POST and its last create (ms after spawn). */
interface PostingRun extends TimedProcess {
  readonly firstPostMs: number;
  readonly lastCreateMs: number;
  readonly created: number;
}

/** Start an empty target answering in {@link LATENCY_MS}, run `args` against it, and read its record. */
async function postInto(
  args: (url: string, token: string) => readonly string[],
  tokenVariable: string,
): Promise<PostingRun> {
  const target: RunningEmulator = await startEmulator({
    data: EMPTY,
    latencyMs: LATENCY_MS,
    latencyJitterMs: 0,
    maxRecordedRequests: Number.MAX_SAFE_INTEGER,
  });
  try {
    const run = await timeProcess(process.execPath, args(target.url, target.token), {
      env: { PATH: process.env.PATH ?? '', [tokenVariable]: target.token },
    });
    const posts = target.record.requests.filter((r) => r.method === 'POST');
    const creates = target.record.creates;
    return {
      ...run,
      firstPostMs: (posts[0]?.at ?? Number.NaN) - run.startedAt,
      lastCreateMs: (creates[creates.length - 1]?.at ?? Number.NaN) - run.startedAt,
      created: creates.length,
    };
  } finally {
    await target.close();
  }
}

function readFlag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

const fmtS = (s: number) => `${s.toFixed(2)} s`;
const fmtMb = (mb: number) => `${mb.toFixed(1)} MB`;

/** Run the benchmark; resolves to whether every goal was met. */
export async function runCloneBench(
  count: number,
  rounds: number,
  print: (line: string) => void,
): Promise<boolean> {
  const dir = mkdtempSync(join(tmpdir(), 'dds-bench-clone-'));
  const source = await startEmulator({ data: EMPTY, generate: count, exportClearSecrets: true });
  const snapshot = join(dir, 'clone.snapshot.jsonl');
  const exports: TimedProcess[] = [];
  const floors: TimedProcess[] = [];
  const bares: PostingRun[] = [];
  const imports: PostingRun[] = [];
  try {
    const bound = (count * LATENCY_MS) / CONCURRENCY / 1000;
    print(
      `clone benchmark: ${count} connections; import --concurrency ${CONCURRENCY} into a target answering in ${LATENCY_MS} ms (no jitter); ${rounds} rounds, medians`,
    );
    for (let round = 0; round < rounds; round++) {
      floors.push(await timeProcess(process.execPath, ['-e', '0']));
      exports.push(
        await timeProcess(
          process.execPath,
          [MAIN, 'export', '--from', source.url, '-o', snapshot, '--quiet'],
          {
            env: { PATH: process.env.PATH ?? '', DDS_SOURCE_TOKEN: source.token },
          },
        ),
      );
      bares.push(await postInto((url) => [BARE, url, snapshot, String(CONCURRENCY)], 'DDS_TOKEN'));
      const journal = join(dir, `clone.${round}.journal.jsonl`);
      imports.push(
        await postInto(
          (url) => [
            MAIN,
            'import',
            snapshot,
            '--to',
            url,
            '--concurrency',
            String(CONCURRENCY),
            '--journal',
            journal,
            '--quiet',
            '--no-progress',
          ],
          'DDS_TARGET_TOKEN',
        ),
      );
      const i = imports[round] as PostingRun;
      print(
        `  round ${round + 1}: export ${fmtS(exports[round]?.seconds ?? Number.NaN)}, bare loop ${fmtS(bares[round]?.seconds ?? Number.NaN)}, import ${fmtS(i.seconds)} (exit ${i.exitCode}, ${i.created} created)`,
      );
    }
    const floorRss = median(floors.map((r) => r.peakRssMb));
    const exportWall = median(exports.map((r) => r.seconds));
    const exportRss = median(exports.map((r) => r.peakRssMb));
    const bareWall = median(bares.map((r) => r.seconds));
    const importWall = median(imports.map((r) => r.seconds));
    const importRss = median(imports.map((r) => r.peakRssMb));
    print('');
    print(`  node -e 0 (the floor of any Node process)       peak RSS ${fmtMb(floorRss)}`);
    print(
      `  dds-migrate export                 wall ${fmtS(exportWall)}   peak RSS ${fmtMb(exportRss)} (max ${fmtMb(Math.max(...exports.map((r) => r.peakRssMb)))}), exit ${[...new Set(exports.map((r) => r.exitCode))].join(',')}`,
    );
    print(`  Little's bound (${count} x ${LATENCY_MS} ms / ${CONCURRENCY})     wall ${fmtS(bound)}`);
    print(
      `  bare node:http POST loop (process) wall ${fmtS(bareWall)}   peak RSS ${fmtMb(median(bares.map((r) => r.peakRssMb)))}   first POST ${median(bares.map((r) => r.firstPostMs)).toFixed(0)} ms   ${(bound / bareWall).toFixed(3)} of the bound`,
    );
    print(
      `  dds-migrate import (process)       wall ${fmtS(importWall)}   peak RSS ${fmtMb(importRss)} (max ${fmtMb(Math.max(...imports.map((r) => r.peakRssMb)))})   first POST ${median(imports.map((r) => r.firstPostMs)).toFixed(0)} ms   ${(bound / importWall).toFixed(3)} of the bound, ${(bareWall / importWall).toFixed(3)} of the bare loop`,
    );
    print(
      `  (import: last create at ${fmtS(median(imports.map((r) => r.lastCreateMs)) / 1000)} after spawn; bare loop: ${fmtS(median(bares.map((r) => r.lastCreateMs)) / 1000)})`,
    );
    print('');
    const complete =
      imports.every((r) => r.exitCode === 0 && r.created === count) &&
      exports.every((r) => r.exitCode === 0) &&
      bares.every((r) => r.created === count);
    const goals: [string, string, boolean][] = [
      [
        `import >= ${BOUND_RATIO_GOAL} of Little's bound end to end`,
        `${(bound / importWall).toFixed(3)} (${fmtS(importWall)} vs ${fmtS(bound)}; the bare loop ${(bound / bareWall).toFixed(3)})`,
        complete && bound / importWall >= BOUND_RATIO_GOAL,
      ],
      [
        `import peak RSS <= ${IMPORT_RSS_GOAL_MB} MB`,
        fmtMb(importRss),
        complete && importRss <= IMPORT_RSS_GOAL_MB,
      ],
      [
        `export peak RSS <= ${EXPORT_RSS_GOAL_MB} MB`,
        fmtMb(exportRss),
        complete && exportRss <= EXPORT_RSS_GOAL_MB,
      ],
    ];
    for (const [goal, value, pass] of goals) print(`  ${pass ? 'PASS' : 'FAIL'}  ${goal}: ${value}`);
    if (!complete) print('  (a run did not complete: every goal fails)');
    return goals.every(([, , pass]) => pass);
  } finally {
    await source.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const count = Number(readFlag('--connections') ?? 2000);
  const rounds = Number(readFlag('--rounds') ?? 3);
  const pass = await runCloneBench(count, rounds, (line) => process.stdout.write(`${line}\n`));
  process.exitCode = pass ? 0 : 1;
}
