/**
 * Benchmark of encrypted snapshots: `export --encrypt-to`, `import --identity` and `verify` of N connections
 * (default 100 000) against the same commands on a plain snapshot, in the same run, each in a child
 * process of its own (`bench/scale-child.ts`, so a peak RSS is the command's alone), the emulators in
 * others (`bench/scale.ts`'s harness).
 *
 * Goals: encrypted export, import and verify of the restore, peak RSS <= 300 MB (the import's goal) and
 * wall <= 1.2 x the plain command. In rounds: each round exports plain and encrypted, then imports each
 * into a fresh empty emulator and verifies it; each figure is the fastest of its rounds, each peak the
 * highest.
 *
 * Run: `npm run build && node dist/bench/encrypted.js [--connections N] [--rounds R] [--only export,import,verify]`
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateIdentity, identityToRecipient } from 'age-encryption';
import { fmt, Rounds, runChild, startEmulatorProcess, stopEmulatorProcess } from './scale.js';
import type { ScaleChildResult } from './scale-child.js';

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

function readFlag(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

/** The import summary's created count (`--json`), -1 when the output is not one. */
function createdOf(run: ScaleChildResult): number {
  try {
    return (JSON.parse(run.stdout) as { counts: { created: number } }).counts.created;
  } catch {
    return -1;
  }
}

const count = Number(readFlag('--connections') ?? 100_000);
const roundCount = Number(readFlag('--rounds') ?? 2);
const commands = (readFlag('--only') ?? 'export,import,verify')
  .split(',')
  .filter((c) => c === 'export' || c === 'import' || c === 'verify');
const dir = mkdtempSync(join(tmpdir(), 'dds-bench-encrypted-'));
let met = 0;
let goals = 0;
function judge(goal: string, value: string, pass: boolean): void {
  goals += 1;
  if (pass) met += 1;
  say(`  ${pass ? 'PASS' : 'FAIL'}  ${goal}: ${value}`);
}

try {
  say(
    `encrypted snapshots: ${count} connections, export and import (--concurrency 8), plain vs age, ${roundCount} rounds`,
  );
  const identity = await generateIdentity();
  const recipient = await identityToRecipient(identity);
  const keyFile = join(dir, 'bench.key');
  writeFileSync(keyFile, `${identity}\n`, { mode: 0o600 });
  const source = await startEmulatorProcess([
    '--data',
    'empty',
    '--generate',
    String(count),
    '--export-clear-secrets',
  ]);
  const rounds = new Rounds();
  const failures: string[] = [];
  try {
    for (let round = 0; round < roundCount; round++) {
      const snapshots = {
        plain: join(dir, `plain-${round}.snapshot.jsonl`),
        age: join(dir, `age-${round}.snapshot.age`),
      };
      for (const kind of ['plain', 'age'] as const) {
        const encrypt = kind === 'age' ? ['--encrypt-to', recipient] : [];
        const run = await runChild(
          ['cli', 'export', '--from', source.url, ...encrypt, '-o', snapshots[kind], '--json'],
          dir,
        );
        if (run.exitCode !== 0) failures.push(`export ${kind}: ${run.stderr.slice(0, 500)}`);
        rounds.keep(`export ${kind}`, run);
      }
      for (const kind of commands.some((c) => c !== 'export') ? (['plain', 'age'] as const) : []) {
        const target = await startEmulatorProcess(['--data', 'empty']);
        try {
          const keys = kind === 'age' ? ['--identity', keyFile] : [];
          const run = await runChild(
            [
              'cli',
              'import',
              snapshots[kind],
              '--to',
              target.url,
              ...keys,
              '--journal',
              join(dir, `${kind}-${round}.journal.jsonl`),
              '--concurrency',
              '8',
              '--no-progress',
              '--json',
            ],
            dir,
          );
          if (run.exitCode !== 0 || createdOf(run) !== count)
            failures.push(
              `import ${kind}: exit ${run.exitCode}, ${createdOf(run)} created: ${run.stderr.slice(0, 500)}`,
            );
          rounds.keep(`import ${kind}`, run);
          // verify reads the snapshot again entry by entry as the environment's connections arrive.
          const verify = await runChild(
            ['cli', 'verify', snapshots[kind], '--env', target.url, ...keys, '--json'],
            dir,
          );
          if (verify.exitCode > 1)
            failures.push(`verify ${kind}: exit ${verify.exitCode}: ${verify.stderr.slice(0, 500)}`);
          rounds.keep(`verify ${kind}`, verify);
        } finally {
          await stopEmulatorProcess(target.child);
        }
      }
      rmSync(snapshots.plain, { force: true });
      rmSync(snapshots.age, { force: true });
    }
  } finally {
    await stopEmulatorProcess(source.child);
  }
  for (const failure of failures) say(`  failed: ${failure}`);
  for (const command of commands) {
    const plain = rounds.fastest(`${command} plain`);
    const age = rounds.fastest(`${command} age`);
    const plainPeak = rounds.highestPeak(`${command} plain`);
    const agePeak = rounds.highestPeak(`${command} age`);
    say(
      `  ${command} plain: ${fmt(plain)} (fastest of ${roundCount}: ${rounds.times(`${command} plain`)}), peak ${plainPeak.toFixed(0)} MB (highest)`,
    );
    say(
      `  ${command} age:   ${fmt(age)} (fastest of ${roundCount}: ${rounds.times(`${command} age`)}), peak ${agePeak.toFixed(0)} MB (highest)`,
    );
    const ok = failures.length === 0;
    judge(
      `${command} encrypted, ${count} connections: peak RSS <= 300 MB`,
      `${agePeak.toFixed(0)} MB (plain ${plainPeak.toFixed(0)} MB)`,
      ok && agePeak <= 300,
    );
    judge(
      `${command} encrypted: wall <= 1.2 x plain`,
      `${(age.seconds / plain.seconds).toFixed(2)} x (${age.seconds.toFixed(2)} s vs ${plain.seconds.toFixed(2)} s)`,
      ok && age.seconds <= 1.2 * plain.seconds,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
say(`\n${met} of ${goals} encrypted-snapshot goals met`);
process.exitCode = met === goals ? 0 : 1;
