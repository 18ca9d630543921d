/**
 * The journal's kind tag is open: the records read are those of the kinds registered in KINDS
 * (sync/kind.ts hands their tags in); any other tag is refused, naming the line; a run's counts are
 * per kind, and `runs` shows every kind under its own key, zero counts included.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { replayJournal } from '../../src/sync/journal/replay.js';
import { KINDS } from '../../src/sync/kind.js';
import { listRuns } from '../../src/sync/runs.js';
import { createdRecords } from '../helpers/journal-records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const at = '2026-01-01T00:00:01.000Z';
const begin = {
  kind: 'begin',
  formatVersion: 2,
  snapshotSha256: 'a'.repeat(64),
  targetUrl: 'http://127.0.0.1:9000',
  tool: 'dds-migrate test',
  at,
};
const run = { kind: 'run', run: 1, command: 'import', tool: 'dds-migrate test', at };
const lines = (records: readonly object[]) => records.map((r) => `${JSON.stringify(r)}\n`).join('');
const created = (object: string, name: string) => createdRecords(object, name, at);

describe('the journal kind tag', () => {
  it('reads the records of every registered kind and counts them per kind', () => {
    const replay = replayJournal(lines([begin, run, ...KINDS.flatMap((k) => created(k.object, 'x'))]));
    for (const kind of KINDS) expect(replay.runs[0]?.counts[kind.object]?.created).toBe(1);
  });

  it('refuses a tag no kind registers, naming the line', () => {
    expect(() => replayJournal(lines([begin, run, ...created('widget', 'w')]), 'j.jsonl')).toThrow(
      /j\.jsonl.*3.*unknown object "widget"/,
    );
  });

  it('asks a before-image of an update only of a kind whose intents always carry one', () => {
    for (const kind of KINDS) {
      const update = {
        kind: 'intent',
        run: 1,
        object: kind.object,
        op: 'update',
        name: 'u',
        targetName: 'u',
        attempt: 1,
        at,
      };
      const read = () => replayJournal(lines([begin, run, update]));
      if (kind.beforeOptional) expect(read).not.toThrow();
      else expect(read).toThrow(/update intent needs a before-image/);
    }
  });

  it('runs shows every kind under its key, zero counts too', async () => {
    const dir = await makeTempDir('dds-journal-kinds-');
    const path = join(dir, 'j.jsonl');
    await writeFile(path, lines([begin, run, ...created(KINDS[0]?.object ?? '', 'a')]));
    const [summary] = (await listRuns(path)).runs;
    expect(Object.keys(summary ?? {}).slice(-KINDS.length)).toEqual(KINDS.map((k) => k.runsKey));
    expect(summary?.[KINDS[0]?.runsKey ?? '']).toMatchObject({ created: 1, inDoubt: 0 });
    for (const kind of KINDS.slice(1))
      expect(summary?.[kind.runsKey]).toEqual({
        created: 0,
        updated: 0,
        deleted: 0,
        failed: 0,
        found: 0,
        existed: 0,
        notOurs: 0,
        inDoubt: 0,
      });
  });
});
