/**
 * An export body that breaks off mid-stream (it starts as a JSON array, then tears)
 * is downloaded again from the start, within the run's retry budget, and the snapshot starts over with
 * it. Before, the stream parser's 502 ended the export at the first torn body.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { BrokenExportError } from '../../src/api/connections.js';
import { createHttpClient } from '../../src/api/http.js';
import { createRetryBudget, type RetryBudget } from '../../src/api/retry-policy.js';
import { UnavailableError } from '../../src/errors.js';
import { exportSnapshot } from '../../src/export/export-snapshot.js';
import { createSilentLogger } from '../../src/log.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { BASE, makeEnvironment } from '../http/client-fixture.js';

const EXPORT = '/api/v1/ds-connections/file-download/export';
const all = [
  { _id: 'a'.repeat(24), name: 'alpha', type: 's3', enabled: 'yes' },
  { _id: 'b'.repeat(24), name: 'beta', type: 's3', enabled: true },
];
const torn = JSON.stringify(all).slice(0, 60);

afterEach(() => {
  nock.cleanAll();
});

async function runExport(budget: RetryBudget) {
  const dir = await makeTempDir('dds-export-retry-');
  const file = join(dir, 'out.snapshot.jsonl');
  const sleeps: number[] = [];
  const run = exportSnapshot(
    { ids: undefined, types: undefined, nameGlob: undefined, include: ['connections'], output: { file } },
    {
      resolveSource: async () => makeEnvironment(),
      createClient: (environment, options) =>
        createHttpClient(environment, {
          log: createSilentLogger(),
          random: () => 0.5,
          sleep: async () => undefined,
          ...(options?.retryBudget ? { retryBudget: options.retryBudget } : {}),
        }),
      retryBudget: budget,
      signal: new AbortController().signal,
      sleep: async (ms) => {
        sleeps.push(ms);
      },
    },
    () => undefined,
  );
  return { run, dir, file, sleeps };
}

describe('export: a body torn mid-stream', () => {
  it('is downloaded again from the start; the snapshot holds each entry once', async () => {
    const scope = nock(BASE)
      .get(EXPORT)
      .reply(200, torn, { 'Content-Type': 'application/octet-stream' })
      .get(EXPORT)
      .reply(200, JSON.stringify(all), { 'Content-Type': 'application/octet-stream' });
    const budget = createRetryBudget(10);
    const { run, dir, file, sleeps } = await runExport(budget);
    const result = await run;
    scope.done();
    expect(result.summary.entryCount).toBe(2);
    expect(result.summary.types).toEqual({ s3: 2 });
    const lines = (await readFile(file, 'utf8')).trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines.filter((l) => l.includes('"alpha"'))).toHaveLength(1);
    expect(await readdir(dir)).toEqual(['out.snapshot.jsonl']);
    expect(sleeps).toHaveLength(1);
    expect(budget.remaining).toBe(9);
  });

  it("stops when the run's retry budget is spent: exit 5 naming the 502, no snapshot, no temporary file", async () => {
    const scope = nock(BASE)
      .get(EXPORT)
      .times(3)
      .reply(200, torn, { 'Content-Type': 'application/octet-stream' });
    const { run, dir } = await runExport(createRetryBudget(2));
    const error = await run.then(
      () => undefined,
      (e: unknown) => e,
    );
    scope.done();
    expect(error).toBeInstanceOf(UnavailableError);
    expect((error as UnavailableError).exitCode).toBe(5);
    expect((error as UnavailableError).http?.status).toBe(502);
    expect((error as UnavailableError).message).toMatch(/retry budget is spent/);
    expect((error as UnavailableError).cause).toBeInstanceOf(BrokenExportError);
    expect(await readdir(dir)).toEqual([]);
  });

  it("stops after the retry policy's 5 restarts even with budget left (6 downloads)", async () => {
    const scope = nock(BASE)
      .get(EXPORT)
      .times(6)
      .reply(200, torn, { 'Content-Type': 'application/octet-stream' });
    const { run } = await runExport(createRetryBudget(100));
    const error = (await run.then(
      () => undefined,
      (e: unknown) => e,
    )) as UnavailableError;
    scope.done();
    expect(error.message).toMatch(/after 6 downloads of the export/);
  });
});
