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

/** What `--help` prints. */
export const GEN_DATA_USAGE = `Usage: node dist/bench/gen-data.js [COUNT] [--seed N] [-o FILE]

Write an emulator seed file of COUNT generated valid connections (default 100000), for benchmarks
and rehearsals; then serve it with: dds-migrate emulator --data FILE

  COUNT         Number of connections (an integer >= 0; default 100000)
  --seed N      Seed of the generator (an integer; default 1): the same seed, the same file
  -o, --out F   Output file (default bench/data/connections-COUNT.json)
  -h, --help    Show this help

To serve generated connections without a file, use the CLI: dds-migrate emulator --generate N
`;

/** A bad argument of the generator: one line, exit 2 (not a stack trace). */
export class GenDataUsageError extends Error {}

/** What the command line asks for: the usage text, or a file to generate. */
export type GenDataCommand = { readonly kind: 'help' } | ({ readonly kind: 'generate' } & GenDataArgs);

/** Parse `COUNT --seed N -o FILE` (or `--help`); a bad argument is a {@link GenDataUsageError}. */
export function parseGenDataArgs(argv: readonly string[]): GenDataCommand {
  let count = 100_000;
  let seed = 1;
  let out: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === undefined) continue;
    if (a === '-h' || a === '--help') return { kind: 'help' };
    if (a === '--seed') seed = Number(argv[++i]);
    else if (a === '-o' || a === '--out') {
      out = argv[++i];
      if (out === undefined || out === '') throw new GenDataUsageError(`Expected a file after ${a}`);
    } else if (a.startsWith('-')) throw new GenDataUsageError(`Unknown option ${a}`);
    else count = Number(a);
  }
  if (!Number.isInteger(count) || count < 0)
    throw new GenDataUsageError(`Expected COUNT to be an integer >= 0, got ${count}`);
  if (!Number.isInteger(seed)) throw new GenDataUsageError(`Expected --seed to be an integer, got ${seed}`);
  return { kind: 'generate', count, seed, out: out ?? `bench/data/connections-${count}.json` };
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

/** Run the generator with `argv`; resolves to the exit code. */
export async function runGenData(
  argv: readonly string[],
  stdout: NodeJS.WritableStream,
  stderr: NodeJS.WritableStream,
): Promise<number> {
  let command: GenDataCommand;
  try {
    command = parseGenDataArgs(argv);
  } catch (error) {
    if (!(error instanceof GenDataUsageError)) throw error;
    stderr.write(`error: ${error.message}. See --help\n`);
    return 2;
  }
  if (command.kind === 'help') {
    stdout.write(GEN_DATA_USAGE);
    return 0;
  }
  try {
    const { generateMs, writeMs } = await writeGeneratedSeed(command);
    stdout.write(
      `generated ${command.count} connections in ${generateMs.toFixed(0)} ms, wrote ${command.out} in ${writeMs.toFixed(0)} ms\n`,
    );
    return 0;
  } catch (error) {
    stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runGenData(process.argv.slice(2), process.stdout, process.stderr).then((code) => {
    process.exitCode = code;
  });
}
