/**
 * Benchmark of the CLI's start-up: `dds-migrate --version`, `--help` and `completion` against `node -e 0`
 * (the floor: Node itself), each a process of its own timed from the outside (`bench/time-process.ts`:
 * wall from spawn to exit, peak RSS from `/usr/bin/time -v`). In rounds: each round runs the baseline
 * and the three commands once, in that order, so a busy moment of the shared machine slows a round of
 * everything alike; each figure is the median of its rounds.
 *
 * Goals: each command's wall <= 2 x `node -e 0`'s, and its peak RSS <= 55 MB.
 *
 * Run: `npm run build && node dist/bench/startup.js [rounds]` (default 15), or `npm run bench -- startup`.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { median, type TimedProcess, timeProcess } from './time-process.js';

const here = dirname(fileURLToPath(import.meta.url));
const MAIN = join(here, '..', 'src', 'cli', 'main.js');

const WALL_RATIO_GOAL = 2;
const RSS_GOAL_MB = 55;

/** What is measured: a label and the arguments of `node`. */
const ROWS: readonly { readonly label: string; readonly args: readonly string[] }[] = [
  { label: 'node -e 0', args: ['-e', '0'] },
  { label: 'dds-migrate --version', args: [MAIN, '--version'] },
  { label: 'dds-migrate --help', args: [MAIN, '--help'] },
  { label: 'dds-migrate completion', args: [MAIN, 'completion'] },
];

/** One row's figures. */
export interface StartupRow {
  readonly label: string;
  readonly medianSeconds: number;
  readonly medianRssMb: number;
  readonly maxRssMb: number;
  readonly exitCodes: readonly (number | null)[];
}

/** Run the benchmark; resolves to the rows and whether every goal was met. */
export async function runStartupBench(
  rounds: number,
  print: (line: string) => void,
): Promise<{ rows: StartupRow[]; pass: boolean }> {
  const runs = new Map<string, TimedProcess[]>(ROWS.map((row) => [row.label, []]));
  // A warm-up round (not counted): the first start reads every file from disk.
  for (const row of ROWS) await timeProcess(process.execPath, row.args);
  for (let round = 0; round < rounds; round++)
    for (const row of ROWS) runs.get(row.label)?.push(await timeProcess(process.execPath, row.args));

  const rows = ROWS.map(({ label }): StartupRow => {
    const list = runs.get(label) ?? [];
    return {
      label,
      medianSeconds: median(list.map((r) => r.seconds)),
      medianRssMb: median(list.map((r) => r.peakRssMb)),
      maxRssMb: Math.max(...list.map((r) => r.peakRssMb)),
      exitCodes: [...new Set(list.map((r) => r.exitCode))],
    };
  });
  const base = rows[0] as StartupRow;
  print(`start-up benchmark: ${rounds} rounds (after one warm-up round), medians; each a process of its own`);
  print('');
  print('  command                    wall ms   x node -e 0   peak RSS MB (median / max)   exit');
  for (const row of rows) {
    print(
      `  ${row.label.padEnd(24)} ${(row.medianSeconds * 1000).toFixed(0).padStart(8)}   ${(row.medianSeconds / base.medianSeconds).toFixed(2).padStart(11)}   ${row.medianRssMb.toFixed(1).padStart(14)} / ${row.maxRssMb.toFixed(1).padStart(5)}        ${row.exitCodes.join(',')}`,
    );
  }
  print('');
  let pass = true;
  for (const row of rows.slice(1)) {
    const ratio = row.medianSeconds / base.medianSeconds;
    const ok = row.exitCodes.every((code) => code === 0);
    const wallOk = ok && ratio <= WALL_RATIO_GOAL;
    const rssOk = ok && row.medianRssMb <= RSS_GOAL_MB;
    pass &&= wallOk && rssOk;
    print(
      `  ${wallOk ? 'PASS' : 'FAIL'}  ${row.label}: wall <= ${WALL_RATIO_GOAL} x node -e 0: ${ratio.toFixed(2)} x`,
    );
    print(
      `  ${rssOk ? 'PASS' : 'FAIL'}  ${row.label}: peak RSS <= ${RSS_GOAL_MB} MB: ${row.medianRssMb.toFixed(1)} MB (node -e 0: ${base.medianRssMb.toFixed(1)} MB)`,
    );
  }
  return { rows, pass };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const rounds = Number(process.argv[2] ?? 15);
  const { pass } = await runStartupBench(rounds, (line) => process.stdout.write(`${line}\n`));
  process.exitCode = pass ? 0 : 1;
}
