/**
 * Benchmark of memory and time at the size of a large environment. Every figure is printed beside its
 * baseline, measured in the same run on the same machine (ratios hold better than absolute times on a
 * shared machine), with the load average, and each goal says PASS or FAIL.
 *
 * Processes: the emulator runs in a child process of its own (`dds-migrate emulator --generate N` or
 * `--generate-cases M`); every measured task runs in another child (`bench/scale-child.ts`), so a peak
 * RSS is that task's alone; this parent only generates and writes data.
 *
 * Parts (N = 100 000 connections, M = 1 000 000 cases by default):
 * - `diff`: diff N vs N (snapshot/snapshot and environment/snapshot): peak RSS <= 400 MB, wall <= 2 x
 *   reading the slower side alone (five rounds, the fastest time and highest peak of each);
 * - `converge`: `import --on-conflict update --prune` of an export of N connections with every 100th
 *   description edited, into the environment it came from (N / 100 updates): peak RSS <= 300 MB, beside
 *   the streamed export of the environment and the snapshot reader alone;
 * - `rerun`, the restore cycle against an empty recovery site (a second emulator): `import` of N
 *   generated connections, peak RSS <= 300 MB; the same command again (a fresh plan against an
 *   unchanged target): no request that writes, the journal unchanged, wall <= 2 x `connections list`
 *   of the same target (rounds alternating the listing and the re-run, medians), peak RSS <= 300 MB;
 *   `verify` and `undo` of it (the undo takes back the import's run), peak RSS <= 300 MB each;
 * - `cases`: `cases list` of M cases, ndjson and csv to a file: peak RSS <= 150 MB, wall <= 1.2 x a
 *   bare node:http loop paging through the same cases;
 * - `e2e`: import end to end, 2 000 entries, `--concurrency 8`, 50 ms latency (no jitter): >= 0.90 of
 *   the bound concurrency / latency, the command's whole wall time (start-up and wind-down included);
 *   rounds alternating the bare loop and the import, each against a fresh emulator, medians.
 *
 * Run: `npm run build && node dist/bench/scale.js [--connections N] [--cases M] [--rounds R]
 * [--only diff,converge,rerun,cases,e2e]`. `SCALE_V8_DEFAULT_HEAP=1` runs the measured children with
 * V8's own heap growth instead of the CLI's (`src/cli/heap.ts`).
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generateConnections } from '../src/emulator/generate.js';
import type { Connection } from '../src/model/connection.js';
import { createSnapshotHeader } from '../src/snapshot/format.js';
import { MERGE_CHUNK_SIZE } from '../src/snapshot/merge.js';
import { readSnapshotEntries } from '../src/snapshot/read.js';
import { writeSnapshot } from '../src/snapshot/write.js';
import type { ScaleChildResult } from './scale-child.js';

const here = dirname(fileURLToPath(import.meta.url));
const MAIN = join(here, '..', 'src', 'cli', 'main.js');
const CHILD = join(here, 'scale-child.js');
const TOKEN = 'bench-scale-token';

/** One goal's verdict. */
export interface ScaleGoal {
  readonly goal: string;
  readonly value: string;
  readonly pass: boolean;
}

const goals: ScaleGoal[] = [];
function judge(goal: string, value: string, pass: boolean): void {
  goals.push({ goal, value, pass });
  process.stdout.write(`  ${pass ? 'PASS' : 'FAIL'}  ${goal}: ${value} [${load()}]\n`);
}
/** The load average (1, 5, 15 minutes), printed beside each figure: the machine is shared. */
function load(): string {
  return `load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;
}
function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** Start `dds-migrate emulator` in a child process; resolves with its URL once it listens. */
export function startEmulatorProcess(args: readonly string[]): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ['--max-old-space-size=4096', MAIN, 'emulator', '--port', '0', '--token', TOKEN, '--json', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      try {
        resolve({ url: (JSON.parse(stdout) as { url: string }).url, child });
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

export function stopEmulatorProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Run one measured task in its own process. */
export function runChild(args: readonly string[], cwd: string): Promise<ScaleChildResult> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      // SCALE_NODE_ARGS: extra node flags for the measured child, e.g. `--cpu-prof --cpu-prof-dir=DIR`.
      [...(process.env.SCALE_NODE_ARGS?.split(' ').filter(Boolean) ?? []), CHILD, ...args],
      {
        cwd,
        env: { ...process.env, DDS_TOKEN: TOKEN, DDS_SOURCE_TOKEN: TOKEN, DDS_TARGET_TOKEN: TOKEN },
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        if (error)
          reject(new Error(`child ${args.slice(0, 2).join(' ')} failed: ${stderr || error.message}`));
        else resolve(JSON.parse(stdout) as ScaleChildResult);
      },
    );
  });
}

export function fmt(r: ScaleChildResult): string {
  return `${r.seconds.toFixed(2)} s, ${r.peakRssMb.toFixed(0)} MB`;
}

function header(environment: string) {
  return createSnapshotHeader({
    tool: 'dds-migrate bench',
    source: { url: 'https://bench.invalid', environment },
  });
}

/** `to`: the exported snapshot with every 100th description edited. */
async function* editEveryHundredth(path: string): AsyncGenerator<Connection> {
  let i = 0;
  for await (const c of readSnapshotEntries(path)) {
    yield i++ % 100 === 0 ? ({ ...c, description: `${String(c.description)} (edited)` } as Connection) : c;
  }
}

/** Rounds of a benchmark in which each measure runs once per round (see {@link benchDiff}). */
const DIFF_ROUNDS = 5;
const CASES_ROUNDS = 2;
/** Rounds of the re-run and end-to-end ratios (each a median): `--rounds`. */
let ratioRounds = 3;

/** The runs of each measure over rounds: the fastest, the highest peak RSS, every time. */
export class Rounds {
  private readonly runs = new Map<string, ScaleChildResult[]>();

  keep(key: string, run: ScaleChildResult): void {
    this.runs.set(key, [...(this.runs.get(key) ?? []), run]);
  }

  fastest(key: string): ScaleChildResult {
    const runs = this.runs.get(key) ?? [];
    const best = runs.reduce<ScaleChildResult | undefined>(
      (a, b) => (a === undefined || b.seconds < a.seconds ? b : a),
      undefined,
    );
    if (best === undefined) throw new Error(`no run of ${key}`);
    return best;
  }

  /** The run of median time (the upper middle one for an even count). */
  median(key: string): ScaleChildResult {
    const runs = [...(this.runs.get(key) ?? [])].sort((a, b) => a.seconds - b.seconds);
    const middle = runs[Math.floor(runs.length / 2)];
    if (middle === undefined) throw new Error(`no run of ${key}`);
    return middle;
  }

  highestPeak(key: string): number {
    return Math.max(...(this.runs.get(key) ?? []).map((r) => r.peakRssMb));
  }

  times(key: string): string {
    return (this.runs.get(key) ?? []).map((r) => r.seconds.toFixed(2)).join(', ');
  }
}

/** diff, snapshot and environment sides, against one emulator serving `count` generated connections. */
async function benchDiff(count: number, dir: string): Promise<void> {
  const { url, child } = await startEmulatorProcess(['--data', 'empty', '--generate', String(count)]);
  try {
    const exported = join(dir, 'env.snapshot.jsonl');
    const exp = await runChild(['cli', 'export', '--from', url, '-o', exported, '--json'], dir);
    if (exp.exitCode !== 0) throw new Error(`export failed: ${exp.stderr}`);
    const edited = join(dir, 'edited.snapshot.jsonl');
    await writeSnapshot({ path: edited }, header('edited'), editEveryHundredth(exported));
    const expectedChanged = Math.ceil(count / 100);

    say(`diff: ${count} vs ${count} connections, 1 % changed (export of the emulator vs an edited copy)`);
    // In rounds: each round runs every baseline and both diffs once, and each figure is the fastest of
    // its rounds (a busy moment of the shared machine slows one round of everything, not only the
    // diffs or only the baselines); a peak RSS is the highest of its rounds. The reader alone reads
    // 256 KiB at a time, as the merge of two snapshots does (with chunk buffers used again, 64 KiB,
    // 256 KiB and 1 MiB read alike), once per round like every other figure: the fastest of more
    // runs than the diff had would stand for a luckier moment of the machine, not a faster reader.
    const rounds = new Rounds();
    const diffs = [
      ['snapshot vs snapshot', exported],
      ['environment vs snapshot', url],
    ] as const;
    const changedOf = new Map<string, number[]>();
    for (let round = 0; round < DIFF_ROUNDS; round++) {
      for (const [key, path] of [
        ['export', exported],
        ['edited', edited],
      ] as const) {
        rounds.keep(`read ${key}`, await runChild(['read-snapshot', path, String(MERGE_CHUNK_SIZE)], dir));
      }
      rounds.keep('read environment', await runChild(['read-environment', url], dir));
      for (const [label, from] of diffs) {
        const run = await runChild(['cli', 'diff', '--from', from, '--to', edited, '--json'], dir);
        let changed = -1;
        try {
          changed = (JSON.parse(run.stdout) as { changed: unknown[] }).changed.length;
        } catch {
          // reported below
        }
        if (run.exitCode !== 1 || changed !== expectedChanged) say(run.stderr.slice(0, 2000));
        changedOf.set(label, [...(changedOf.get(label) ?? []), run.exitCode === 1 ? changed : -1]);
        rounds.keep(label, run);
      }
    }
    const readExported = rounds.fastest('read export');
    const readEdited = rounds.fastest('read edited');
    const readEnv = rounds.fastest('read environment');
    say(
      `  baseline: snapshot reader alone ${fmt(readExported)} (export) / ${fmt(readEdited)} (edited), fastest of ${DIFF_ROUNDS} rounds`,
    );
    say(
      `  baseline: streamed export of the environment alone ${fmt(readEnv)}, fastest of ${DIFF_ROUNDS} rounds`,
    );
    for (const [label, from] of diffs) {
      const slower = Math.max(from === url ? readEnv.seconds : readExported.seconds, readEdited.seconds);
      const run = rounds.fastest(label);
      const peak = rounds.highestPeak(label);
      const changes = changedOf.get(label) ?? [];
      const correct = changes.length > 0 && changes.every((c) => c === expectedChanged);
      say(
        `  diff ${label}: ${run.seconds.toFixed(2)} s (fastest of ${DIFF_ROUNDS} rounds: ${rounds.times(label)}), ` +
          `peak ${peak.toFixed(0)} MB (highest), ${(run.seconds / slower).toFixed(2)} x the slower side alone; ` +
          `changed ${changes.join(', ')} (expected ${expectedChanged} each)`,
      );
      judge(`diff ${label}: peak RSS <= 400 MB`, `${peak.toFixed(0)} MB`, correct && peak <= 400);
      judge(
        `diff ${label}: wall <= 2 x the slower side alone`,
        `${(run.seconds / slower).toFixed(2)} x (${run.seconds.toFixed(2)} s vs ${slower.toFixed(2)} s)`,
        correct && run.seconds <= 2 * slower,
      );
    }
  } finally {
    await stopEmulatorProcess(child);
  }
}

/** The import summary's counts (`--json`), empty when the output is not one. */
function countsOf(stdout: string): Record<string, number> {
  try {
    return (JSON.parse(stdout) as { counts?: Record<string, number> }).counts ?? {};
  } catch {
    return {};
  }
}

/** The sum of the import summary's counts that mean a request that writes was sent for an entry. */
function sentOf(stdout: string): number {
  if (!stdout.trimStart().startsWith('{')) return Number.NaN;
  const counts = countsOf(stdout);
  return (
    (counts.created ?? 0) +
    (counts.renamed ?? 0) +
    (counts.updated ?? 0) +
    (counts.deleted ?? 0) +
    (counts.failed ?? 0) +
    (counts.pending ?? 0)
  );
}

/**
 * The converging import: an environment of `count` generated connections made to match its own export
 * with every 100th description edited (`--on-conflict update --prune`): count / 100 updates, the rest
 * compared and unchanged. Baselines: the streamed export of the environment alone and the snapshot
 * reader alone, each in a child of its own.
 */
async function benchConverge(count: number, dir: string): Promise<void> {
  const { url, child } = await startEmulatorProcess(['--data', 'empty', '--generate', String(count)]);
  try {
    const exported = join(dir, 'converge-env.snapshot.jsonl');
    const exp = await runChild(['cli', 'export', '--from', url, '-o', exported, '--json'], dir);
    if (exp.exitCode !== 0) throw new Error(`export failed: ${exp.stderr}`);
    const edited = join(dir, 'converge-edited.snapshot.jsonl');
    await writeSnapshot({ path: edited }, header('edited'), editEveryHundredth(exported));
    const expectedUpdated = Math.ceil(count / 100);
    say(`converge: ${count} connections, ${expectedUpdated} edited, import --on-conflict update --prune`);
    const readEnv = await runChild(['read-environment', url], dir);
    const readSnap = await runChild(['read-snapshot', edited], dir);
    say(`  baseline: streamed export of the environment alone ${fmt(readEnv)} [${load()}]`);
    say(`  baseline: snapshot reader alone ${fmt(readSnap)}`);
    const converge = await runChild(
      [
        'cli',
        'import',
        edited,
        '--to',
        url,
        '--on-conflict',
        'update',
        '--prune',
        '--journal',
        join(dir, 'converge.journal.jsonl'),
        '--no-progress',
        '--json',
      ],
      dir,
    );
    const counts = countsOf(converge.stdout);
    say(
      `  import --on-conflict update --prune: ${fmt(converge)}, exit ${converge.exitCode}, ` +
        `updated ${counts.updated ?? '?'}, unchanged ${counts.unchanged ?? '?'}, deleted ${counts.deleted ?? '?'}`,
    );
    if (converge.exitCode !== 0) say(converge.stderr.slice(0, 2000));
    judge(
      `converging import of ${count} entries (${expectedUpdated} updated): peak RSS <= 300 MB`,
      `${converge.peakRssMb.toFixed(0)} MB (the export alone: ${readEnv.peakRssMb.toFixed(0)} MB)`,
      converge.exitCode === 0 &&
        counts.updated === expectedUpdated &&
        counts.deleted === 0 &&
        converge.peakRssMb <= 300,
    );
  } finally {
    await stopEmulatorProcess(child);
  }
}

/**
 * `import` of `count` generated connections into an empty recovery site (a second emulator), then its
 * re-run against the journal that import wrote: the re-run sends nothing and is measured against
 * `connections list` of the same target.
 */
async function benchImport(count: number, dir: string): Promise<void> {
  const snapshot = join(dir, 'import.snapshot.jsonl');
  await writeSnapshot({ path: snapshot }, header('import'), generateConnections(count, { seed: 7 }));
  const { url, child } = await startEmulatorProcess(['--data', 'empty']);
  try {
    const journal = join(dir, 'import.journal.jsonl');
    const args = [
      'cli',
      'import',
      snapshot,
      '--to',
      url,
      '--journal',
      journal,
      '--concurrency',
      '8',
      '--no-progress',
      '--json',
    ];
    say(`import: ${count} entries into an empty recovery site (emulator, no latency), --concurrency 8`);
    const first = await runChild(args, dir);
    const created = sentOf(first.stdout);
    say(
      `  import: ${fmt(first)}, exit ${first.exitCode}, ${created} sent, ${(created / first.seconds).toFixed(0)} creates/s`,
    );
    if (first.exitCode !== 0) say(first.stderr.slice(0, 2000));
    judge(
      `import of ${count} entries: peak RSS <= 300 MB`,
      `${first.peakRssMb.toFixed(0)} MB`,
      first.exitCode === 0 && created === count && first.peakRssMb <= 300,
    );

    say(`import re-run: the same ${count} entries against the unchanged target (a fresh plan)`);
    // In rounds alternating the listing and the re-run, each figure the median of its rounds (a
    // re-run writes nothing, so the target stays as it is); the peak the highest. The journal's size
    // before and after each re-run: a re-run that finds nothing to do records nothing.
    const rounds = new Rounds();
    const outcomes: { exitCode: number; sent: number; journalGrew: number }[] = [];
    const ratios: string[] = [];
    for (let round = 0; round < ratioRounds; round++) {
      const list = await runChild(
        ['cli-discard', 'connections', 'list', '--env', url, '--format', 'ndjson'],
        dir,
      );
      rounds.keep('list', list);
      const before = statSync(journal).size;
      const run = await runChild(args, dir);
      rounds.keep('rerun', run);
      outcomes.push({
        exitCode: run.exitCode,
        sent: sentOf(run.stdout),
        journalGrew: statSync(journal).size - before,
      });
      ratios.push(`${(run.seconds / list.seconds).toFixed(2)} [${load()}]`);
      if (run.exitCode !== 0) say(run.stderr.slice(0, 2000));
    }
    const list = rounds.median('list');
    const rerun = rounds.median('rerun');
    say(
      `  baseline: connections list of the target ${fmt(list)} (median of ${ratioRounds} rounds: ${rounds.times('list')}; exit ${list.exitCode})`,
    );
    say(
      `  re-run: ${fmt(rerun)} (median of ${ratioRounds} rounds: ${rounds.times('rerun')}), exits ${outcomes.map((o) => o.exitCode).join(', ')}, ` +
        `entries written ${outcomes.map((o) => o.sent).join(', ')}, journal bytes added ${outcomes.map((o) => o.journalGrew).join(', ')}`,
    );
    say(`  ratio per round: ${ratios.join('; ')}`);
    const ok =
      outcomes.every((o) => o.exitCode === 0 && o.sent === 0 && o.journalGrew === 0) && list.exitCode === 0;
    judge(
      're-run against the unchanged target: writes nothing, wall <= 2 x connections list',
      `${(rerun.seconds / list.seconds).toFixed(2)} x (medians ${rerun.seconds.toFixed(2)} s vs ${list.seconds.toFixed(2)} s)`,
      ok && rerun.seconds <= 2 * list.seconds,
    );
    const rerunPeak = rounds.highestPeak('rerun');
    const listPeak = rounds.highestPeak('list');
    judge(
      `import (re-run) of ${count} entries: peak RSS <= 300 MB`,
      `${rerunPeak.toFixed(0)} MB (highest of ${ratioRounds}; connections list: ${listPeak.toFixed(0)} MB)`,
      ok && rerunPeak <= 300,
    );

    say(`verify: the ${count} restored entries against their snapshot`);
    const verify = await runChild(['cli', 'verify', snapshot, '--env', url, '--json'], dir);
    let present = -1;
    try {
      present = (JSON.parse(verify.stdout) as { connections: { present: number } }).connections.present;
    } catch {
      // reported below
    }
    say(`  verify: ${fmt(verify)}, exit ${verify.exitCode}, ${present} present`);
    if (verify.exitCode !== 0) say(verify.stderr.slice(0, 2000));
    judge(
      `verify of ${count} entries: peak RSS <= 300 MB`,
      `${verify.peakRssMb.toFixed(0)} MB (connections list: ${listPeak.toFixed(0)} MB)`,
      verify.exitCode === 0 && present === count && verify.peakRssMb <= 300,
    );

    say(`undo: the newest run of the journal, the import of ${count} entries (one DELETE each)`);
    const undo = await runChild(['cli', 'undo', journal, '--to', url, '--no-progress', '--json'], dir);
    let deleted = -1;
    try {
      const steps = (JSON.parse(undo.stdout) as { steps: { outcome?: string }[] }).steps;
      deleted = steps.filter((step) => step.outcome === 'deleted').length;
    } catch {
      // reported below
    }
    say(`  undo: ${fmt(undo)}, exit ${undo.exitCode}, ${deleted} deleted`);
    if (undo.exitCode !== 0) say(undo.stderr.slice(0, 2000));
    judge(
      `undo of an import of ${count} entries: peak RSS <= 300 MB`,
      `${undo.peakRssMb.toFixed(0)} MB (connections list: ${listPeak.toFixed(0)} MB)`,
      undo.exitCode === 0 && deleted === count && undo.peakRssMb <= 300,
    );
  } finally {
    await stopEmulatorProcess(child);
  }
}

/** `cases list` of `count` cases, ndjson and csv, against a bare paging loop. */
async function benchCases(count: number, dir: string): Promise<void> {
  const { url, child } = await startEmulatorProcess(['--data', 'empty', '--generate-cases', String(count)]);
  try {
    say(`cases list: ${count} cases, pages of 1000`);
    // The emulator answers its first pass over the cases slower (its code is not optimised yet): one
    // pass warms it, not counted.
    const warm = await runChild(['bare-cases', url, '1000'], dir);
    say(`  warm-up: bare paging loop ${fmt(warm)} (not counted)`);
    // In rounds, as for diff: the bare loop and both commands once per round, each the fastest of its
    // rounds, each peak the highest.
    const rounds = new Rounds();
    const formats = ['ndjson', 'csv'] as const;
    const exits = new Map<string, number[]>();
    for (let round = 0; round < CASES_ROUNDS; round++) {
      rounds.keep('bare', await runChild(['bare-cases', url, '1000'], dir));
      for (const format of formats) {
        const out = join(dir, `cases.${format}`);
        const run = await runChild(
          ['cli', 'cases', 'list', '--env', url, '--format', format, '-o', out],
          dir,
        );
        rmSync(out, { force: true });
        if (run.exitCode !== 0) say(run.stderr.slice(0, 2000));
        exits.set(format, [...(exits.get(format) ?? []), run.exitCode]);
        rounds.keep(format, run);
      }
    }
    const bare = rounds.fastest('bare');
    say(
      `  baseline: bare node:http paging loop ${fmt(bare)}, ${bare.count} cases (fastest of ${CASES_ROUNDS} rounds: ${rounds.times('bare')})`,
    );
    for (const format of formats) {
      const run = rounds.fastest(format);
      const peak = rounds.highestPeak(format);
      say(
        `  cases list --format ${format} -o FILE: ${run.seconds.toFixed(2)} s (fastest of ${CASES_ROUNDS} rounds: ${rounds.times(format)}), peak ${peak.toFixed(0)} MB (highest), exits ${(exits.get(format) ?? []).join(', ')}`,
      );
      const ok = (exits.get(format) ?? []).every((code) => code === 0) && bare.count === count;
      judge(`cases list ${format}: peak RSS <= 150 MB`, `${peak.toFixed(0)} MB`, ok && peak <= 150);
      judge(
        `cases list ${format}: wall <= 1.2 x the bare loop`,
        `${(run.seconds / bare.seconds).toFixed(2)} x (${run.seconds.toFixed(2)} s vs ${bare.seconds.toFixed(2)} s)`,
        ok && run.seconds <= 1.2 * bare.seconds,
      );
    }
  } finally {
    await stopEmulatorProcess(child);
  }
}

/**
 * Import end to end: 2 000 entries, concurrency 8, 50 ms latency without jitter. In rounds: each round
 * runs the bare loop and then the import, each against an emulator of its own (an import needs an
 * empty target), and each figure is the median of its rounds.
 */
async function benchEndToEnd(dir: string): Promise<void> {
  const count = 2000;
  const concurrency = 8;
  const latencyMs = 50;
  const snapshot = join(dir, 'e2e.snapshot.jsonl');
  const entries = generateConnections(count, { seed: 42 }).map(({ _id, ...rest }) => rest as Connection);
  await writeSnapshot({ path: snapshot }, header('e2e'), entries);
  const emulatorArgs = ['--data', 'empty', '--latency', String(latencyMs), '--jitter', '0'];
  const bound = concurrency / (latencyMs / 1000);
  const ideal = count / bound;
  say(
    `import end to end: ${count} entries, --concurrency ${concurrency}, ${latencyMs} ms latency (no jitter)`,
  );
  const rounds = new Rounds();
  const exitCodes: number[] = [];
  for (let round = 0; round < ratioRounds; round++) {
    // Baseline: the same POSTs from a bare loop (no journal, no checks).
    const bareEmulator = await startEmulatorProcess(emulatorArgs);
    try {
      rounds.keep(
        'bare',
        await runChild(['bare-posts', bareEmulator.url, snapshot, String(concurrency)], dir),
      );
    } finally {
      await stopEmulatorProcess(bareEmulator.child);
    }
    const { url, child } = await startEmulatorProcess(emulatorArgs);
    try {
      const journal = join(dir, `e2e.${round}.journal.jsonl`);
      const run = await runChild(
        [
          'cli',
          'import',
          snapshot,
          '--to',
          url,
          '--concurrency',
          String(concurrency),
          '--journal',
          journal,
          '--no-progress',
          '--quiet',
        ],
        dir,
      );
      if (run.exitCode !== 0) say(run.stderr.slice(0, 2000));
      exitCodes.push(run.exitCode);
      rounds.keep('import', run);
    } finally {
      await stopEmulatorProcess(child);
    }
  }
  const bare = rounds.median('bare');
  const run = rounds.median('import');
  say(
    `  baseline: bare node:http POST loop ${fmt(bare)} (median of ${ratioRounds} rounds: ${rounds.times('bare')}); ` +
      `${(count / bare.seconds / bound).toFixed(3)} of the bound (what the machine allows now)`,
  );
  const ratio = count / run.seconds / bound;
  const ok = exitCodes.every((code) => code === 0);
  say(
    `  whole command ${fmt(run)} (median of ${ratioRounds} rounds: ${rounds.times('import')}), exit ${exitCodes.join(', ')}; ` +
      `bound ${bound}/s = ${ideal.toFixed(2)} s; ${(count / run.seconds).toFixed(1)} creates/s; ` +
      `${(bare.seconds / run.seconds).toFixed(3)} of the bare loop`,
  );
  judge(
    'import end to end at c = 8, 50 ms: >= 0.90 of the bound',
    `${ratio.toFixed(3)} (${run.seconds.toFixed(2)} s vs ${ideal.toFixed(2)} s; the bare loop: ${(count / bare.seconds / bound).toFixed(3)})`,
    ok && ratio >= 0.9,
  );
}

function readFlag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const connections = Number(readFlag('--connections') ?? 100_000);
  const cases = Number(readFlag('--cases') ?? 1_000_000);
  ratioRounds = Number(readFlag('--rounds') ?? ratioRounds);
  const parts = new Set((readFlag('--only') ?? 'diff,converge,rerun,cases,e2e').split(','));
  const dir = mkdtempSync(join(tmpdir(), 'dds-bench-scale-'));
  try {
    say(`scale benchmark (shared 2-core machine: compare ratios, not absolute times)`);
    if (parts.has('diff')) await benchDiff(connections, dir);
    if (parts.has('converge')) await benchConverge(connections, dir);
    if (parts.has('rerun')) await benchImport(connections, dir);
    if (parts.has('cases')) await benchCases(cases, dir);
    if (parts.has('e2e')) await benchEndToEnd(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const passed = goals.filter((g) => g.pass).length;
  say(`\n${passed} of ${goals.length} scale goals met`);
  process.exitCode = passed === goals.length ? 0 : 1;
}
