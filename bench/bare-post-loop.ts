/**
 * The baseline of `bench/clone.ts`: what a user writes in half an hour instead of `dds-migrate import`.
 * A process of its own that loads nothing of dds-migrate: it reads a snapshot file (JSON lines: a
 * header, the connections, a trailer), then POSTs every connection to `/api/v1/ds_connections` with a
 * bare node:http loop, CONCURRENCY requests at once over keep-alive sockets. No journal, no checks,
 * no retries, no throttle: what the machine and the service allow.
 *
 * Run: `DDS_TOKEN=... node dist/bench/bare-post-loop.js URL SNAPSHOT [CONCURRENCY]` (default 8). Prints
 * one JSON line: how many were created and the ms from start to the first POST.
 */
import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { postJson as post } from './bare-post.js';

const [base, snapshot, concurrencyArg] = process.argv.slice(2);
if (base === undefined || snapshot === undefined) {
  process.stderr.write('usage: node dist/bench/bare-post-loop.js URL SNAPSHOT [CONCURRENCY]\n');
  process.exit(2);
}
const concurrency = Number(concurrencyArg ?? 8);
const token = process.env.DDS_TOKEN ?? '';
const started = performance.now();
// Every line but the header and the trailer is a connection.
const bodies = readFileSync(snapshot, 'utf8')
  .split('\n')
  .filter((line) => line !== '' && !line.startsWith('{"kind":"dds-migrate/'))
  .map((line) => {
    const { _id, ...connection } = JSON.parse(line) as Record<string, unknown>;
    return JSON.stringify({ ds_connection: connection });
  });
const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
const url = new URL(`${base}/api/v1/ds_connections`);
let next = 0;
let created = 0;
let firstPostMs = -1;
const worker = async () => {
  while (next < bodies.length) {
    const body = bodies[next++] as string;
    if (firstPostMs < 0) firstPostMs = performance.now() - started;
    const status = await post(agent, url, token, body);
    if (status >= 200 && status < 300) created++;
  }
};
await Promise.all(Array.from({ length: concurrency }, worker));
agent.destroy();
process.stdout.write(`${JSON.stringify({ created, firstPostMs })}\n`);
process.exitCode = created === bodies.length ? 0 : 1;
