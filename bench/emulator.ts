/**
 * Benchmark of the emulator's rate limit (goal: "429s carry Retry-After; the rate limit holds within
 * 10 % over 10 s"). An emulator runs in-process with `rateLimit` 20, then 100; a few concurrent raw HTTP
 * clients (node:http, keep-alive, no pacing, no retries) hammer `GET /ds-connections?limit=1` for 10 s.
 *
 * Figures per limit: requests sent, accepted (non-429) requests per second, the 429 share, whether
 * every 429 carried a usable Retry-After (whole seconds >= 1), and the accepted rate per second of the
 * window (min/max), the first second left out.
 *
 * The limiter is a token bucket that starts full with `burst = limit` tokens (one second's worth), so
 * over a window of T seconds at most `burst + limit * T` requests pass. Two rates are printed:
 * - including the burst: `accepted / T` (over 10 s, 1.1 x the limit by construction);
 * - excluding the burst: `(accepted - burst) / T`, the sustained rate.
 * The goal uses the sustained rate, |rate - limit| <= 10 % of the limit: it is what "the limit holds"
 * means for a client that runs longer than a second, and including a one-second allowance in a 10 s
 * window would judge the bucket size (exactly the 10 % margin) rather than the rate. Also required:
 * every 429 carried Retry-After, and the clients offered at least twice the limit (else nothing was
 * tested).
 *
 * Run: `npm run build && node dist/bench/emulator.js [seconds]` (default 10).
 */
import { Agent, request } from 'node:http';
import { pathToFileURL } from 'node:url';
import { type RunningEmulator, startEmulator } from '../src/emulator/index.js';

/** One limit, hammered. */
export interface RateLimitRun {
  readonly limit: number;
  readonly burst: number;
  readonly seconds: number;
  readonly clients: number;
  readonly sent: number;
  readonly accepted: number;
  readonly rejected: number;
  /** Answers other than 200 and 429 (should be none). */
  readonly other: number;
  readonly acceptedPerSecondWithBurst: number;
  readonly acceptedPerSecondWithoutBurst: number;
  /** Accepted per whole second of the window, the first second left out. */
  readonly perSecondMin: number;
  readonly perSecondMax: number;
  readonly rejectedShare: number;
  /** 429s without a Retry-After of whole seconds >= 1. */
  readonly rejectedWithoutRetryAfter: number;
  readonly pass: boolean;
}

/** What the benchmark reports. */
export interface EmulatorBenchResult {
  readonly name: 'emulator';
  readonly runs: readonly RateLimitRun[];
  readonly tolerance: number;
  readonly pass: boolean;
}

const TOLERANCE = 0.1;
const CLIENTS = 4;
const TOKEN = 'bench-emulator-token';

/** One request's outcome. */
interface Outcome {
  readonly sentAt: number;
  readonly status: number;
  readonly retryAfter: string | undefined;
}

function get(url: URL, agent: Agent): Promise<{ status: number; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'GET', agent, headers: { authorization: `Bearer ${TOKEN}` } },
      (res) => {
        const header = res.headers['retry-after'];
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: header }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** Hammer `limit` for `seconds` with {@link CLIENTS} clients, each sending its next request at once. */
async function measureLimit(limit: number, seconds: number): Promise<RateLimitRun> {
  const emu: RunningEmulator = await startEmulator({
    data: { connections: [] },
    token: TOKEN,
    rateLimit: limit,
  });
  // The emulator's default bucket size (options.rateLimitBurst unset).
  const burst = Math.max(1, limit);
  const agent = new Agent({ keepAlive: true, maxSockets: CLIENTS });
  const url = new URL(`${emu.url}/api/v1/ds-connections?limit=1`);
  const outcomes: Outcome[] = [];
  try {
    const start = performance.now();
    const deadline = start + seconds * 1000;
    const client = async () => {
      for (let now = performance.now(); now < deadline; now = performance.now()) {
        const answer = await get(url, agent);
        outcomes.push({ sentAt: now - start, ...answer });
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));
  } finally {
    agent.destroy();
    await emu.close();
  }
  const accepted = outcomes.filter((o) => o.status === 200);
  const rejected = outcomes.filter((o) => o.status === 429);
  const perSecond = new Array<number>(seconds).fill(0);
  for (const o of accepted) {
    const second = Math.floor(o.sentAt / 1000);
    if (second < seconds) perSecond[second] = (perSecond[second] ?? 0) + 1;
  }
  const steady = perSecond.slice(1);
  const withoutBurst = (accepted.length - burst) / seconds;
  const rejectedWithoutRetryAfter = rejected.filter(
    (o) => o.retryAfter === undefined || !/^[1-9]\d*$/.test(o.retryAfter),
  ).length;
  const other = outcomes.length - accepted.length - rejected.length;
  return {
    limit,
    burst,
    seconds,
    clients: CLIENTS,
    sent: outcomes.length,
    accepted: accepted.length,
    rejected: rejected.length,
    other,
    acceptedPerSecondWithBurst: accepted.length / seconds,
    acceptedPerSecondWithoutBurst: withoutBurst,
    perSecondMin: steady.length > 0 ? Math.min(...steady) : Number.NaN,
    perSecondMax: steady.length > 0 ? Math.max(...steady) : Number.NaN,
    rejectedShare: outcomes.length === 0 ? 0 : rejected.length / outcomes.length,
    rejectedWithoutRetryAfter,
    pass:
      Math.abs(withoutBurst - limit) <= TOLERANCE * limit &&
      rejected.length > 0 &&
      rejectedWithoutRetryAfter === 0 &&
      other === 0 &&
      outcomes.length / seconds >= 2 * limit,
  };
}

/** Run the benchmark for each limit in `limits`, `seconds` each. */
export async function runEmulatorBench(
  limits: readonly number[] = [20, 100],
  seconds = 10,
): Promise<EmulatorBenchResult> {
  const runs: RateLimitRun[] = [];
  for (const limit of limits) runs.push(await measureLimit(limit, seconds));
  return { name: 'emulator', runs, tolerance: TOLERANCE, pass: runs.every((r) => r.pass) };
}

/** The figures as lines. */
export function formatEmulatorBench(r: EmulatorBenchResult): string {
  const lines = r.runs.flatMap((run) => [
    `  limit ${run.limit}/s (burst ${run.burst}), ${run.clients} keep-alive clients for ${run.seconds} s: ` +
      `${run.sent} requests (${Math.round(run.sent / run.seconds)}/s offered), ${run.accepted} accepted, ` +
      `${run.rejected} answered 429 (${(run.rejectedShare * 100).toFixed(1)} %)` +
      (run.other > 0 ? `, ${run.other} other answers` : ''),
    `    accepted/s: ${run.acceptedPerSecondWithoutBurst.toFixed(2)} without the burst ` +
      `(${(((run.acceptedPerSecondWithoutBurst - run.limit) / run.limit) * 100).toFixed(1)} % off the limit; goal within ${r.tolerance * 100} %), ` +
      `${run.acceptedPerSecondWithBurst.toFixed(2)} with it; per second after the first: ${run.perSecondMin}..${run.perSecondMax}`,
    `    Retry-After on every 429: ${run.rejectedWithoutRetryAfter === 0 ? 'yes' : `NO (${run.rejectedWithoutRetryAfter} without)`}; ` +
      (run.pass ? 'PASS' : 'FAIL'),
  ]);
  return [
    'emulator rate limit (in-process emulator, raw node:http clients):',
    ...lines,
    r.pass ? 'PASS' : 'FAIL',
  ].join('\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const seconds = process.argv[2] === undefined ? 10 : Number(process.argv[2]);
  if (!Number.isInteger(seconds) || seconds < 2)
    throw new Error(`Expected seconds to be an integer >= 2, got ${process.argv[2]}`);
  const result = await runEmulatorBench([20, 100], seconds);
  process.stdout.write(`${formatEmulatorBench(result)}\n`);
  process.exitCode = result.pass ? 0 : 1;
}
