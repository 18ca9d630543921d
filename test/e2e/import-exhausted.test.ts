/**
 * A service that keeps failing every create: the run spends its retry budget, stops cleanly with exit 5
 * and one line saying to re-run; once the service is healthy, the same command finishes the job, each
 * connection created exactly once.
 */
import { mkdtemp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import type { Connection } from '../../src/model/connection.js';
import { clearRegisteredSecrets } from '../../src/secrets.js';
import { replayJournal, writesOf } from '../../src/sync/journal/replay.js';
import { runCli } from '../helpers/run-cli.js';
import { countCreatePosts, prepareImportSource, targetReferences } from './import.helpers.js';

describe('import: retry budget spent (exit 5), then resumed by the same command', () => {
  let source: RunningEmulator;
  let dir: string;
  let snapshot: string;
  let entries: Connection[];
  let overridesPath: string;
  let secretEnv: Record<string, string>;

  beforeAll(async () => {
    ({ source, dir, snapshot, entries, overridesPath, secretEnv } =
      await prepareImportSource('import-exhausted-'));
  });
  afterAll(async () => {
    await source.close();
  });

  let target: RunningEmulator | undefined;
  let work: string;
  beforeEach(async () => {
    work = await mkdtemp(join(dir, 'run-'));
  });
  afterEach(async () => {
    await target?.close();
    target = undefined;
    clearRegisteredSecrets();
  });

  it.each([
    ['every create answered 500', '500:1@POST:/ds_connections'],
    // Some of the failing creates were applied: the look-ups of run 1 and the reconcile of run 2 find them.
    [
      'creates applied 30 % of the time, always answered 500',
      'commit-then-500:0.3@POST:/ds_connections,500:1@POST:/ds_connections',
    ],
  ])(
    '%s: exit 5 with one line saying to re-run; the same command then completes, each once',
    async (_, faults) => {
      const emu = await startEmulator({ data: { connections: [], ...targetReferences() }, faults, seed: 11 });
      target = emu;
      const journal = join(work, 'journal.jsonl');
      const report = join(work, 'report.jsonl');
      // Concurrency 16 spreads the budget over many entries, so the backoffs stay short.
      const args = [
        'import',
        snapshot,
        '--to',
        emu.url,
        '--overrides',
        overridesPath,
        '--journal',
        journal,
        '--report',
        report,
        '--concurrency',
        '16',
      ];
      const env = { DDS_TARGET_TOKEN: emu.token, ...secretEnv };

      const first = await runCli(args, { env });
      expect(first.exitCode).toBe(5);
      const errorLines = first.stderr.split('\n').filter((l) => /^error:/.test(l));
      expect(errorLines).toHaveLength(1);
      expect(errorLines[0]).toMatch(/retry budget/);
      expect(errorLines[0]).toMatch(/re-run/);
      expect(first.stdout).toMatch(/pending\s+\d+\s+\(not settled: re-run to resume\)/);
      // Never created twice, even while failing.
      for (const e of entries) expect(emu.record.createCount(e.name)).toBeLessThanOrEqual(1);
      // The report of the stopped run accounts for every entry, and agrees with the journal.
      const firstReport = (await readFile(report, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { name: string; outcome: string; inDoubt?: boolean });
      expect(firstReport).toHaveLength(entries.length);
      expect(new Set(firstReport.map((l) => l.outcome))).toContain('pending');
      const journaled = writesOf(replayJournal(await readFile(journal, 'utf8')).runs.at(-1), 'connection');
      for (const line of firstReport) {
        if (line.outcome === 'created') expect(journaled.get(line.name)?.state).toBe('done');
        if (line.outcome === 'pending' && line.inDoubt)
          expect(journaled.get(line.name)?.state).toBe('in-doubt');
      }
      for (const e of entries) {
        if (emu.record.createCount(e.name) === 1)
          expect(journaled.get(e.name)?.state).toMatch(/done|in-doubt/);
      }

      emu.setFaults('');
      const postsBefore = countCreatePosts(emu);
      const second = await runCli(args, { env });
      expect(second.stderr).not.toMatch(/error/);
      expect(second.exitCode).toBe(0);
      for (const e of entries) expect(emu.record.createCount(e.name)).toBe(1);
      expect(emu.store.connections).toHaveLength(entries.length);
      // The second run POSTs only what is not there yet.
      const createdBefore = firstReport.filter((l) => l.outcome === 'created').length;
      expect(countCreatePosts(emu) - postsBefore).toBeLessThanOrEqual(entries.length - createdBefore);
      // The report keeps the first attempt's lines and adds the second's (both name run 1, which the
      // second finished): the last line of each entry says how it ended.
      const lines = (await readFile(report, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { name: string; outcome: string; run: number | null });
      expect(lines).toHaveLength(firstReport.length + entries.length);
      expect(new Set(lines.map((l) => l.run))).toEqual(new Set([1]));
      const last = new Map(lines.map((l) => [l.name, l]));
      expect(last.size).toBe(entries.length);
      expect(new Set([...last.values()].map((l) => l.outcome))).toEqual(new Set(['created']));
    },
  );
});
