/**
 * Benchmark of `validate`: a 100k-connection snapshot checked against the shipped template schemas.
 * Goal: <= 5 s and <= 150 MB peak RSS on a 2-core machine.
 *
 * The snapshot is generated (emulator data, secrets masked as an export masks them) and written with
 * `writeSnapshot`, in batches so the generator's memory does not count. Validation then runs in a
 * child process, so its peak RSS (`process.resourceUsage().maxRSS`) is validation's alone, through the
 * very code path of the command: `loadShippedCatalog` + `validateSnapshot`. The result is checked
 * (every entry counted, none invalid, masked secrets reported), not just timed.
 *
 * Run: `npm run build && node dist/bench/validate.js [count]`.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generateConnections } from '../src/emulator/generate.js';
import { maskConnection } from '../src/emulator/masking.js';
import type { Connection } from '../src/model/connection.js';
import { loadShippedCatalog } from '../src/schema/catalog.js';
import { validateSnapshot } from '../src/schema/validate-snapshot.js';
import { createSnapshotHeader } from '../src/snapshot/format.js';
import { writeSnapshot } from '../src/snapshot/write.js';

/** What the benchmark reports. */
export interface ValidateBenchResult {
  readonly name: 'validate';
  readonly count: number;
  readonly fileMb: number;
  readonly goalSeconds: number;
  readonly goalRssMb: number;
  /** Wall time of catalog loading + validation, in the child. */
  readonly seconds: number;
  readonly entriesPerSecond: number;
  /** Peak RSS of the child process that validated. */
  readonly peakRssMb: number;
  /** Seconds to generate and write the snapshot (not part of the goal). */
  readonly writeSeconds: number;
  readonly correct: boolean;
  readonly pass: boolean;
}

const GOAL_SECONDS = 5;
const GOAL_RSS_MB = 150;
const BATCH = 1000;

/** What the child prints. */
interface ChildResult {
  readonly seconds: number;
  readonly peakRssMb: number;
  readonly entryCount: number;
  readonly invalidCount: number;
  readonly maskedWarnings: number;
}

/** Generated connections, `BATCH` at a time, masked like an export. */
function* generateExport(count: number): Generator<Connection> {
  for (let start = 0, batch = 0; start < count; start += BATCH, batch++) {
    const n = Math.min(BATCH, count - start);
    for (const c of generateConnections(n, { seed: batch + 1, namePrefix: `b${batch}` })) {
      yield maskConnection(c as unknown as Record<string, unknown>) as unknown as Connection;
    }
  }
}

/** Validate `path` as the command does and measure it (runs in the child). */
async function measureValidation(path: string): Promise<ChildResult> {
  const started = process.hrtime.bigint();
  const catalog = await loadShippedCatalog();
  const report = await validateSnapshot(path, catalog);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return {
    seconds,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    entryCount: report.entryCount,
    invalidCount: report.invalidCount,
    maskedWarnings: report.warnings.filter((w) => w.kind === 'masked-secret').length,
  };
}

function runChild(path: string): Promise<ChildResult> {
  const self = fileURLToPath(import.meta.url);
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [self, '--child', path],
      { maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`validation child failed: ${stderr || error.message}`));
        else resolve(JSON.parse(stdout) as ChildResult);
      },
    );
  });
}

/** Generate, write, validate (in a child) and judge. */
export async function runValidateBench(count = 100_000): Promise<ValidateBenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'dds-bench-validate-'));
  try {
    const path = join(dir, 'bench.snapshot.jsonl');
    const header = createSnapshotHeader({
      tool: 'dds-migrate bench',
      source: { url: 'https://bench.example.com', environment: 'bench' },
    });
    const writeStart = process.hrtime.bigint();
    await writeSnapshot({ path }, header, generateExport(count));
    const writeSeconds = Number(process.hrtime.bigint() - writeStart) / 1e9;
    const child = await runChild(path);
    const correct = child.entryCount === count && child.invalidCount === 0 && child.maskedWarnings > 0;
    return {
      name: 'validate',
      count,
      fileMb: statSync(path).size / 1024 / 1024,
      goalSeconds: GOAL_SECONDS,
      goalRssMb: GOAL_RSS_MB,
      seconds: child.seconds,
      entriesPerSecond: child.entryCount / child.seconds,
      peakRssMb: child.peakRssMb,
      writeSeconds,
      correct,
      pass: correct && child.seconds <= GOAL_SECONDS && child.peakRssMb <= GOAL_RSS_MB,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The figures as lines. */
export function formatValidateBench(r: ValidateBenchResult): string {
  return [
    `validate: ${r.count} connections (${r.fileMb.toFixed(1)} MB snapshot, written in ${r.writeSeconds.toFixed(2)} s)`,
    `  wall time   ${r.seconds.toFixed(2)} s (goal <= ${r.goalSeconds} s)`,
    `  throughput  ${Math.round(r.entriesPerSecond)} entries/s`,
    `  peak RSS    ${r.peakRssMb.toFixed(1)} MB (goal <= ${r.goalRssMb} MB)`,
    `  result      ${r.correct ? 'correct' : 'WRONG'}`,
    r.pass ? 'PASS' : 'FAIL',
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = process.argv.slice(2);
  if (args[0] === '--child' && args[1] !== undefined) {
    process.stdout.write(JSON.stringify(await measureValidation(args[1])));
  } else {
    const count = args[0] === undefined ? 100_000 : Number(args[0]);
    if (!Number.isInteger(count) || count < 1)
      throw new Error(`Expected count to be an integer >= 1, got ${args[0]}`);
    const result = await runValidateBench(count);
    process.stdout.write(`${formatValidateBench(result)}\n`);
    process.exitCode = result.pass ? 0 : 1;
  }
}
