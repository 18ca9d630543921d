/**
 * Benchmark of `diff`: 100k vs 100k connections with 1 % changed (goal <= 10 s). Two figures:
 * - core: the streaming diff (`createStreamingDiff`) fed arrays already in memory (what every `diff` runs);
 * - command: `dds-migrate diff A.snapshot.jsonl B.snapshot.jsonl --json` in-process, which reads and
 *   verifies both snapshot files through the snapshot reader and then runs the same core.
 * The `to` side differs from `from` in server-managed fields everywhere (`_id`, `updated_at`), has
 * every `owners_v2` reversed (a set: no difference), comes in reverse order, and has 1 % of its
 * connections really changed. The result is checked, not just timed.
 *
 * Run: `npm run build && node dist/bench/diff.js [count]`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { runCli } from '../src/cli/run-cli.js';
import { createStreamingDiff } from '../src/diff/stream.js';
import type { DiffResult } from '../src/diff/types.js';
import { generateConnections } from '../src/emulator/generate.js';
import type { Connection } from '../src/model/connection.js';
import { createSnapshotHeader } from '../src/snapshot/format.js';
import { writeSnapshot } from '../src/snapshot/write.js';
import { collect } from './capture.js';

/** What one benchmark reports. */
export interface DiffBenchResult {
  readonly name: 'diff';
  readonly count: number;
  readonly goalSeconds: number;
  /** The streaming diff fed arrays already in memory. */
  readonly coreSeconds: number;
  /** The whole command over two snapshot files (read, verify, compare, print JSON). */
  readonly commandSeconds: number;
  /** Peak resident set size of the process (includes generating the data). */
  readonly peakRssMb: number;
  readonly correct: boolean;
  readonly pass: boolean;
}

const GOAL_SECONDS = 10;

/** The `to` side: server-managed noise everywhere, owners reordered, every 100th connection changed. */
function deriveTarget(from: readonly Connection[]): { to: Connection[]; changed: Set<string> } {
  const changed = new Set<string>();
  const to = from.map((c, i) => {
    const copy: Record<string, unknown> = {
      ...c,
      _id: `ff${String(i).padStart(22, '0')}`,
      updated_at: '2026-11-22T10:00:00.000Z',
    };
    if (Array.isArray(c.owners_v2)) copy.owners_v2 = [...c.owners_v2].reverse();
    if (i % 100 === 0) {
      copy.description = `${String(c.description)} (edited)`;
      changed.add(c.name);
    }
    return copy as Connection;
  });
  return { to: to.reverse(), changed };
}

function isExpected(result: DiffResult, count: number, changed: ReadonlySet<string>): boolean {
  return (
    result.added.length === 0 &&
    result.removed.length === 0 &&
    result.changed.length === changed.size &&
    result.changed.every(
      (c) => changed.has(c.name) && c.fields.length === 1 && c.fields[0]?.path === '/description',
    ) &&
    result.unchanged === count - changed.size
  );
}

/** Run the benchmark with `count` connections a side (default 100 000). */
export async function runDiffBench(count = 100_000): Promise<DiffBenchResult> {
  const from = generateConnections(count, { seed: 7 }) as Connection[];
  const { to, changed } = deriveTarget(from);

  const coreStart = performance.now();
  const differ = createStreamingDiff();
  for (const entry of from) differ.add('from', entry);
  for (const entry of to) differ.add('to', entry);
  const coreResult = differ.finish().result;
  const coreSeconds = (performance.now() - coreStart) / 1000;

  const dir = mkdtempSync(join(tmpdir(), 'dds-bench-diff-'));
  let commandSeconds = Number.NaN;
  let commandCorrect = false;
  try {
    const header = (environment: string) =>
      createSnapshotHeader({
        tool: 'dds-migrate bench',
        source: { url: 'https://bench.invalid', environment },
      });
    const fromPath = join(dir, 'from.snapshot.jsonl');
    const toPath = join(dir, 'to.snapshot.jsonl');
    await writeSnapshot({ path: fromPath }, header('from'), from);
    await writeSnapshot({ path: toPath }, header('to'), to);
    const out = collect();
    const err = collect();
    const commandStart = performance.now();
    const code = await runCli(['diff', '--from', fromPath, '--to', toPath, '--json'], {
      stdout: out.stream,
      stderr: err.stream,
      env: {},
      cwd: dir,
    });
    commandSeconds = (performance.now() - commandStart) / 1000;
    commandCorrect = code === 1 && isExpected(JSON.parse(out.text()) as DiffResult, count, changed);
    if (!commandCorrect) process.stderr.write(`diff command: exit ${code}\n${err.text()}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const peakRssMb = process.resourceUsage().maxRSS / 1024;
  const correct = isExpected(coreResult, count, changed) && commandCorrect;
  const pass = correct && coreSeconds <= GOAL_SECONDS && commandSeconds <= GOAL_SECONDS;
  return {
    name: 'diff',
    count,
    goalSeconds: GOAL_SECONDS,
    coreSeconds,
    commandSeconds,
    peakRssMb,
    correct,
    pass,
  };
}

/** One line a person reads. */
export function formatDiffBench(r: DiffBenchResult): string {
  return (
    `diff ${r.count} vs ${r.count} (1% changed): core ${r.coreSeconds.toFixed(2)} s, ` +
    `command over two snapshots ${r.commandSeconds.toFixed(2)} s, peak RSS ${r.peakRssMb.toFixed(0)} MB; ` +
    `goal <= ${r.goalSeconds} s; result ${r.correct ? 'correct' : 'WRONG'}: ${r.pass ? 'PASS' : 'FAIL'}`
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const count = process.argv[2] === undefined ? undefined : Number(process.argv[2]);
  const result = await runDiffBench(count);
  process.stdout.write(`${formatDiffBench(result)}\n`);
  process.exitCode = result.pass ? 0 : 1;
}
