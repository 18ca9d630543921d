/**
 * Writes a large emulator seed file for benchmarks and rehearsals:
 * `node dist/bench/gen-data.js [COUNT=100000] [--seed N] [-o FILE]` (default `bench/data/connections-COUNT.json`).
 * Prints how long generation and writing took; then `dds-migrate emulator --data FILE` serves it.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { generateConnections } from '../src/emulator/generate.js';

/** Arguments of the generator. */
export interface GenDataArgs {
  readonly count: number;
  readonly seed: number;
  readonly out: string;
}

/** Parse `COUNT --seed N -o FILE`. */
export function parseGenDataArgs(argv: readonly string[]): GenDataArgs {
  let count = 100_000;
  let seed = 1;
  let out: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--seed') seed = Number(argv[++i]);
    else if (a === '-o' || a === '--out') out = argv[++i];
    else if (a !== undefined) count = Number(a);
  }
  if (!Number.isInteger(count) || count < 0)
    throw new Error(`Expected COUNT to be an integer >= 0, got ${count}`);
  if (!Number.isInteger(seed)) throw new Error(`Expected --seed to be an integer, got ${seed}`);
  return { count, seed, out: out ?? `bench/data/connections-${count}.json` };
}

/** Generate and write the seed file, one connection a line so memory stays flat while writing. */
export async function writeGeneratedSeed(
  args: GenDataArgs,
): Promise<{ generateMs: number; writeMs: number }> {
  const t0 = performance.now();
  const connections = generateConnections(args.count, { seed: args.seed });
  const t1 = performance.now();
  await mkdir(dirname(args.out), { recursive: true });
  const stream = createWriteStream(args.out);
  const write = async (text: string) => {
    if (!stream.write(text)) await once(stream, 'drain');
  };
  await write('{"connections":[\n');
  for (let i = 0; i < connections.length; i++) {
    await write(`${i === 0 ? '' : ',\n'}${JSON.stringify(connections[i])}`);
  }
  await write('\n],"scanProfiles":[],"cases":[]}\n');
  stream.end();
  await once(stream, 'finish');
  return { generateMs: t1 - t0, writeMs: performance.now() - t1 };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = parseGenDataArgs(process.argv.slice(2));
  writeGeneratedSeed(args).then(
    ({ generateMs, writeMs }) => {
      process.stdout.write(
        `generated ${args.count} connections in ${generateMs.toFixed(0)} ms, wrote ${args.out} in ${writeMs.toFixed(0)} ms\n`,
      );
    },
    (err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
