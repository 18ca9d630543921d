/**
 * Bench-only child of `bench/scale.ts`: one measured task in a process of its own, so its peak RSS is
 * the task's alone (the emulator runs in yet another process). Prints one JSON line: exit code, wall
 * time, peak RSS, a count and the command's output.
 *
 * Modes:
 * - `cli ARGV...`: `dds-migrate ARGV...` in-process through `runCli` (the command's very code path);
 * - `cli-discard ARGV...`: the same, its stdout thrown away (a listing's records; stderr kept);
 * - `read-snapshot PATH [CHUNK]`: the verifying snapshot reader alone (what `diff` reads a snapshot side
 *   with), reading CHUNK bytes at a time (default: the reader's own);
 * - `read-environment URL`: the streamed export alone (what `diff` reads an environment side with);
 * - `bare-posts URL SNAPSHOT CONCURRENCY`: every entry of the snapshot POSTed with a bare node:http loop,
 *   CONCURRENCY at once (no journal, no checks, no throttle): what the machine and the emulator allow;
 * - `bare-cases URL PAGE`: paging through every case with a bare node:http loop (keep-alive, JSON.parse
 *   of each page, nothing else): the floor under `cases list`.
 * Tokens come from `DDS_TOKEN`.
 */
import { Agent, request } from 'node:http';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { exportConnections } from '../src/api/connections.js';
import { createHttpClient } from '../src/api/http.js';
import { limitHeapGrowth } from '../src/cli/heap.js';
import { runCli } from '../src/cli/run-cli.js';
import { createSilentLogger } from '../src/log.js';
import { readSnapshotEntries } from '../src/snapshot/read.js';
import { postJson } from './bare-post.js';
import { collect } from './capture.js';
import { measureCli } from './export-child.js';

/** What the child prints. */
export interface ScaleChildResult {
  readonly exitCode: number;
  readonly seconds: number;
  readonly peakRssMb: number;
  /** Items read (reader modes) or -1. */
  readonly count: number;
  readonly stdout: string;
  readonly stderr: string;
}

function token(): string {
  return process.env.DDS_TOKEN ?? '';
}

async function readSnapshotAlone(path: string, chunkSize: number | undefined): Promise<number> {
  let count = 0;
  for await (const _ of readSnapshotEntries(path, { label: path, chunkSize })) count++;
  return count;
}

async function readEnvironmentAlone(url: string): Promise<number> {
  const client = createHttpClient(
    {
      name: undefined,
      label: 'bench',
      url,
      token: token(),
      refreshToken: undefined,
      authScheme: 'bearer',
      concurrency: undefined,
      rate: undefined,
      protected: false,
      caFile: undefined,
      insecureHttp: false,
    },
    { log: createSilentLogger() },
  );
  try {
    let count = 0;
    for await (const _ of exportConnections(client)) count++;
    return count;
  } finally {
    client.close();
  }
}

function getJson(agent: Agent, url: URL): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { agent, headers: { authorization: `Bearer ${token()}`, accept: 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`HTTP ${res.statusCode} for ${url.pathname}`));
          else resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function pageCasesBare(base: string, pageSize: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    let skip = 0;
    for (;;) {
      const url = new URL(`${base}/api/v1/actionable-insights/all-cases`);
      url.searchParams.set('skip', String(skip));
      url.searchParams.set('limit', String(pageSize));
      url.searchParams.set('requireTotalCount', 'true');
      const body = (await getJson(agent, url)) as { data?: { cases?: unknown[]; totalCount?: number } };
      const page = body.data?.cases ?? [];
      skip += page.length;
      if (page.length === 0 || skip >= (body.data?.totalCount ?? 0)) return skip;
    }
  } finally {
    agent.destroy();
  }
}

async function postAllBare(base: string, snapshot: string, concurrency: number): Promise<number> {
  const bodies: string[] = [];
  for await (const entry of readSnapshotEntries(snapshot))
    bodies.push(JSON.stringify({ ds_connection: entry }));
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const url = new URL(`${base}/api/v1/ds_connections`);
  let next = 0;
  let created = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const body = bodies[next++] as string;
      const status = await postJson(agent, url, token(), body);
      if (status >= 200 && status < 300) created++;
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    agent.destroy();
  }
  return created;
}

async function measure(task: () => Promise<number>): Promise<ScaleChildResult> {
  const started = performance.now();
  const count = await task();
  const seconds = (performance.now() - started) / 1000;
  return {
    exitCode: 0,
    seconds,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    count,
    stdout: '',
    stderr: '',
  };
}

async function measureCliDiscarding(argv: readonly string[]): Promise<ScaleChildResult> {
  const err = collect();
  const discard = new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });
  const started = performance.now();
  const exitCode = await runCli([...argv], {
    stdout: discard,
    stderr: err.stream,
    env: process.env,
    cwd: process.cwd(),
  });
  const seconds = (performance.now() - started) / 1000;
  const peakRssMb = process.resourceUsage().maxRSS / 1024;
  return { exitCode, seconds, peakRssMb, count: -1, stdout: '', stderr: err.text() };
}

/** Run one mode. */
export async function runScaleChild(args: readonly string[]): Promise<ScaleChildResult> {
  const [mode, a, b] = args;
  switch (mode) {
    case 'cli': {
      const r = await measureCli(args.slice(1));
      return { ...r, count: -1 };
    }
    case 'cli-discard':
      return measureCliDiscarding(args.slice(1));
    case 'read-snapshot':
      return measure(() => readSnapshotAlone(String(a), b === undefined ? undefined : Number(b)));
    case 'read-environment':
      return measure(() => readEnvironmentAlone(String(a)));
    case 'bare-posts':
      return measure(() => postAllBare(String(a), String(b), Number(args[3] ?? 8)));
    case 'bare-cases':
      return measure(() => pageCasesBare(String(a), Number(b ?? 1000)));
    default:
      throw new Error(`unknown mode ${String(mode)}`);
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // The heap grows as in `dds-migrate` itself (src/cli/main.ts), for the command and its baselines alike,
  // unless SCALE_V8_DEFAULT_HEAP=1 asks for V8's own growth.
  // A measured command's heap is its own (`cli ARGS`); a baseline's, the command's it stands beside.
  const [mode, ...rest] = process.argv.slice(2);
  if (process.env.SCALE_V8_DEFAULT_HEAP !== '1')
    limitHeapGrowth(mode === 'cli' ? rest : [mode === 'bare-cases' ? 'cases' : String(mode)]);
  const result = await runScaleChild(process.argv.slice(2));
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
