/**
 * `not ours`: a create whose answer was lost, and whose look-up finds an object created before this run's
 * intent (its `created_at`, older by more than CLOCK_SKEW_MS), is someone else's; the executor driven
 * through the real kinds and HTTP client against nock, a real journal, and undo's history of it.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import nock from 'nock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRetryBudget } from '../../src/api/retry-policy.js';
import { createSilentLogger } from '../../src/log.js';
import { executeSteps } from '../../src/sync/execute.js';
import type { JournalObject } from '../../src/sync/journal/records.js';
import { replayJournal, writesOf } from '../../src/sync/journal/replay.js';
import { type Journal, openJournal } from '../../src/sync/journal/writer.js';
import { writersFor } from '../../src/sync/kind.js';
import { planConnectionUndo } from '../../src/sync/kinds/connection/undo.js';
import { CLOCK_SKEW_MS } from '../../src/sync/ownership.js';
import { Write } from '../../src/sync/step.js';
import { type Clock, createRateLimiter } from '../../src/sync/throttle.js';
import { createRunHistory, type UndoContext } from '../../src/sync/undo-plan.js';
import { recordsOf } from '../helpers/journal-records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { BASE, makeClient } from '../http/client-fixture.js';

const CONNECTIONS = '/api/v1/ds_connections';
const clock: Clock = { now: () => 0, sleep: async () => undefined };

/** A create of `name` (an `s3` connection unless a profile), its payload held. */
const create = (
  name: string,
  object: JournalObject = 'connection',
  whenTaken: 'exists' | 'failure' = 'exists',
) => new Write(name, { object, op: 'create', name, whenTaken });
const load = ({ name }: Write) => ({ body: { name, type: 's3' }, image: { name, type: 's3' } });

let journal: Journal;
let journalPath: string;
beforeEach(async () => {
  journalPath = join(await makeTempDir('not-ours-'), 'journal.jsonl');
  journal = await openJournal(
    journalPath,
    { snapshotSha256: 'c'.repeat(64), targetUrl: BASE },
    { tool: 'dds-migrate test' },
  );
});
afterEach(async () => {
  await journal.close();
  nock.cleanAll();
});

async function run(step: Write) {
  const { client } = makeClient();
  const result = await executeSteps(
    [step],
    {
      writers: writersFor(client),
      journal,
      run: 1,
      limiter: createRateLimiter({ clock }),
      budget: createRetryBudget(3),
      log: createSilentLogger(),
      signal: new AbortController().signal,
      clock,
    },
    { load },
  );
  await journal.close();
  return { outcome: result.outcomes[0], records: recordsOf(readFileSync(journalPath, 'utf8')) };
}

/** A POST answered 500 (in doubt), then the look-up finds the name with this `created_at`. */
function lostAnswerThenFound(name: string, createdAt: unknown) {
  return nock(BASE)
    .post(CONNECTIONS)
    .reply(500, { message: 'Internal error' })
    .get(`${CONNECTIONS}/${name}`)
    .reply(200, { data: { ds_connection: { _id: 'f'.repeat(24), name, created_at: createdAt } } });
}

const ago = (ms: number) => new Date(Date.now() - ms).toISOString();

describe('a create in doubt found by name', () => {
  it('created before the intent (beyond the skew): exists, not ours, journaled with createdAt; undo leaves it even with --include-in-doubt', async () => {
    const createdAt = ago(CLOCK_SKEW_MS + 60_000);
    const scope = lostAnswerThenFound('a', createdAt);
    const { outcome, records } = await run(create('a'));
    expect(scope.isDone()).toBe(true);
    expect(outcome).toMatchObject({ kind: 'exists', targetId: 'f'.repeat(24), createdAt });
    expect(records.filter((r) => r.kind === 'outcome')).toEqual([
      expect.objectContaining({ op: 'create', result: 'exists', createdAt }),
    ]);
    const history = createRunHistory(1);
    for (const [i, r] of records.entries()) history.add(r, i);
    const [h] = history.finish();
    const context = { includeInDoubt: true } as UndoContext;
    const step = planConnectionUndo(h as never, { name: 'a', type: 's3' } as never, context);
    expect(step).toMatchObject({
      kind: 'left',
      reason: expect.stringMatching(/^not ours: .*before this run's request/),
    });
    expect(replayJournal(readFileSync(journalPath, 'utf8')).runs[0]?.counts.connection?.notOurs).toBe(1);
  });

  it('where a found name is not a taken one (rename, fail, profiles): failed, saying not ours', async () => {
    lostAnswerThenFound('b', ago(CLOCK_SKEW_MS * 3));
    const { outcome } = await run(create('b', 'connection', 'failure'));
    expect(outcome).toMatchObject({
      kind: 'failed',
      message: expect.stringMatching(/^not ours: created by someone else at /),
    });
  });

  it.each([
    ['within the clock skew', ago(CLOCK_SKEW_MS / 2)],
    ['after the intent', new Date(Date.now() + 1000).toISOString()],
    ['missing', undefined],
    ['unparsable', 'yesterday'],
    ['without a zone', '2001-01-01T00:00:00'],
    ['a number', 978307200000],
  ])('created_at %s: in doubt (applied via lookup), as before', async (_, createdAt) => {
    lostAnswerThenFound('c', createdAt);
    const { outcome } = await run(create('c'));
    expect(outcome).toMatchObject({ kind: 'applied', via: 'lookup' });
  });

  it("a scan profile's look-up gives its createdAt", async () => {
    const createdAt = ago(CLOCK_SKEW_MS * 2);
    nock(BASE)
      .post('/api/v1/scanProfiles')
      .reply(502, 'Bad Gateway')
      .get('/api/v1/scanProfiles')
      .query(true)
      .reply(200, { scanProfiles: [{ _id: 'e'.repeat(24), name: 'p', createdAt }] });
    const { outcome } = await run(create('p', 'scan-profile'));
    expect(outcome).toMatchObject({ kind: 'exists', createdAt });
  });
});

describe('a create left in doubt by an interrupted run', () => {
  /** The step the next run plans for it: in doubt, with the time of the earlier run's intent. */
  const reconcile = (name: string, intentAt: string) =>
    new Write(name, {
      object: 'connection',
      op: 'create',
      name,
      whenTaken: 'exists',
      inDoubt: true,
      intentAt,
    });
  const foundWith = (name: string, createdAt: string) =>
    nock(BASE)
      .get(`${CONNECTIONS}/${name}`)
      .reply(200, { data: { ds_connection: { _id: 'd'.repeat(24), name, created_at: createdAt } } });

  it('found older than that intent: not ours, with no request sent', async () => {
    const scope = foundWith('r', ago(CLOCK_SKEW_MS * 4));
    const { outcome } = await run(reconcile('r', ago(CLOCK_SKEW_MS * 2)));
    expect(scope.isDone()).toBe(true);
    expect(outcome).toMatchObject({ kind: 'exists', createdAt: expect.any(String) });
  });

  it('found newer than that intent, or with no intent time: in doubt, taken as applied', async () => {
    foundWith('s', ago(CLOCK_SKEW_MS));
    expect((await run(reconcile('s', ago(CLOCK_SKEW_MS * 2)))).outcome).toMatchObject({
      kind: 'applied',
      via: 'lookup',
    });
  });

  it('the replay keeps the time of the first intent since the write last settled', () => {
    const intent = (attempt: number, at: string) =>
      JSON.stringify({
        kind: 'intent',
        object: 'connection',
        op: 'create',
        name: 't',
        targetName: 't',
        attempt,
        at,
      });
    const begin = JSON.stringify({
      kind: 'begin',
      formatVersion: 1,
      tool: 'dds-migrate test',
      snapshotSha256: 'c'.repeat(64),
      targetUrl: BASE,
      at: '2026-01-01T00:00:00.000Z',
    });
    const text = [
      begin,
      intent(1, '2026-01-01T00:00:01.000Z'),
      intent(2, '2026-01-01T00:00:09.000Z'),
      '',
    ].join('\n');
    const write = writesOf(replayJournal(text).runs[0], 'connection').get('t');
    expect(write).toMatchObject({ state: 'in-doubt', attempt: 2, intentAt: '2026-01-01T00:00:01.000Z' });
  });
});
