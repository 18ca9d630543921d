/**
 * The converge parts of the import (pure): journal records with `op`/`object` (and old create-only
 * records still replaying), the plan's update / delete / unchanged / done steps, the pre-flight counting
 * every change, images that never hold a credential value, and the undo's history and steps.
 */
import { describe, expect, it } from 'vitest';
import { dropMaskedValues, findClearSecrets, makeSafeImage } from '../../src/connections/images.js';
import type { Problem } from '../../src/errors.js';
import { checkPreflight, type PreflightFacts } from '../../src/importer/preflight.js';
import type { Connection } from '../../src/model/connection.js';
import { MASK } from '../../src/secrets.js';
import type { JournalRecord } from '../../src/sync/journal/records.js';
import { replayJournal, writesOf } from '../../src/sync/journal/replay.js';
import { createConvergeHelpers, targetSummarizer } from '../../src/sync/kinds/connection/converge.js';
import type {
  JournaledWrite,
  PreparedEntry,
  TargetConnection,
} from '../../src/sync/kinds/connection/kind.js';
import { connectionKind, planImport } from '../../src/sync/kinds/connection/kind.js';
import { planProfileUndo } from '../../src/sync/kinds/scan-profile/undo.js';
import type { OnConflict } from '../../src/sync/plan.js';
import { createRunHistory, planCreatedUndo } from '../../src/sync/undo-plan.js';
import { recordsOf } from '../helpers/journal-records.js';

const at = '2026-01-01T00:00:00.000Z';
const begin = {
  kind: 'begin',
  formatVersion: 1,
  snapshotSha256: 'a'.repeat(64),
  targetUrl: 'https://t',
  tool: 't',
  at,
};
const lines = (records: unknown[]) => records.map((r) => `${JSON.stringify(r)}\n`).join('');

const catalog = {
  secretFields: (type: string) => new Set(type === 'rdb-mysql' ? ['password', 'access_code'] : ['password']),
  requiredSecretFields: () => [],
  checkEntry: () => ({ errors: [], warnings: [] }),
};
const helpers = createConvergeHelpers(catalog);
const entry = (name: string, extra: Record<string, unknown> = {}): PreparedEntry => ({
  name,
  type: 'rdb-mysql',
  sourceId: undefined,
  body: { name, type: 'rdb-mysql', rdb_url: 'jdbc:mysql://h/db', password: MASK, ...extra },
});
const conn = (name: string, extra: Record<string, unknown> = {}): Connection =>
  ({
    _id: `id-${name}`,
    name,
    type: 'rdb-mysql',
    rdb_url: 'jdbc:mysql://h/db',
    password: MASK,
    ...extra,
  }) as Connection;
const noProblems = (): Problem[] => [];

describe('journal records with op and object', () => {
  it('replays an old create-only journal as connection creates', () => {
    const text = lines([
      begin,
      { kind: 'intent', name: 'a', targetName: 'a', attempt: 1, at },
      { kind: 'outcome', result: 'created', name: 'a', targetName: 'a', targetId: 'x', via: 'post', at },
    ]);
    const replay = replayJournal(text);
    expect(recordsOf(text)[1]).toMatchObject({ op: 'create', object: 'connection' });
    expect(writesOf(replay.runs.at(-1), 'connection').get('a')).toMatchObject({
      op: 'create',
      state: 'done',
      targetId: 'x',
    });
  });

  it('keeps update and delete states apart from creates, and refuses an update without its before-image', () => {
    const before = { name: 'b', type: 's3' };
    const replay = replayJournal(
      lines([
        begin,
        {
          kind: 'intent',
          object: 'connection',
          op: 'update',
          name: 'b',
          targetName: 'b',
          attempt: 1,
          at,
          before,
          image: before,
          secretsSent: [],
        },
        {
          kind: 'outcome',
          object: 'connection',
          op: 'update',
          result: 'updated',
          name: 'b',
          targetName: 'b',
          targetId: undefined,
          at,
        },
        {
          kind: 'intent',
          object: 'connection',
          op: 'delete',
          name: 'c',
          targetName: 'c',
          attempt: 1,
          at,
          before: { name: 'c', type: 'smb' },
        },
      ]),
    );
    const writes = writesOf(replay.runs.at(-1), 'connection');
    expect([...writes.values()].map((w) => w.op)).toEqual(['update', 'delete']);
    expect(writes.get('b')).toMatchObject({ op: 'update', state: 'done', type: 's3' });
    expect(writes.get('c')).toMatchObject({ op: 'delete', state: 'in-doubt', type: 'smb' });
    expect(() =>
      replayJournal(
        lines([begin, { kind: 'intent', op: 'update', name: 'b', targetName: 'b', attempt: 1, at }]),
      ),
    ).toThrow(/before-image/);
  });
});

describe('targetSummarizer: what the import keeps of each listed connection', () => {
  const entries = [
    entry('same'),
    entry('stale', { rdb_url: 'jdbc:mysql://new/db' }),
    entry('new-one'),
    entry('done-before', { rdb_url: 'jdbc:mysql://new/db' }),
  ];
  const target = [
    { name: 'same', _id: 'id-same', connection: conn('same') },
    { name: 'stale', _id: 'id-stale', connection: conn('stale') },
    { name: 'extra', _id: 'id-extra', connection: conn('extra', { password: 'clear-text-secret' }) },
    { name: 'done-before', _id: 'id-done-before', connection: conn('done-before') },
  ];
  const summarized = (
    onConflict: OnConflict,
    prune: boolean,
    only?: ReadonlySet<string>,
  ): TargetConnection[] =>
    target.map((t) =>
      targetSummarizer(
        entries,
        (e) => e as PreparedEntry,
        { onConflict, prune, only },
        helpers,
      )(t.connection),
    );
  const planWith = (
    t: readonly TargetConnection[],
    onConflict: OnConflict,
    prune: boolean,
    only?: ReadonlySet<string>,
  ) =>
    planImport({
      entries,
      target: t,
      journal: new Map<string, JournaledWrite>([
        ['done-before', { op: 'update', state: 'done', type: 'rdb-mysql', targetName: 'done-before' }],
      ]),
      onConflict,
      prune,
      only,
      converge: helpers,
      check: noProblems,
    });

  // A send's or an update's body is prepared when sent: compared as what it loads.
  const loaded = (p: ReturnType<typeof planImport>) => ({
    ...p,
    steps: p.steps.map((step) => ('source' in step ? { ...step, source: step.source.load() } : step)),
  });

  it('the plan from the summaries is the plan from the whole connections, whatever the options', () => {
    const onlySome = new Set(['stale', 'extra', 'new-one']);
    for (const onConflict of ['update', 'skip', 'rename'] as const)
      for (const prune of [true, false])
        for (const only of [undefined, onlySome]) {
          const whole = loaded(planWith(target, onConflict, prune, only));
          expect(
            loaded(planWith(summarized(onConflict, prune, only), onConflict, prune, only)),
            `${onConflict} ${prune} ${only !== undefined}`,
          ).toEqual(whole);
        }
    expect(planWith(target, 'update', true).counts).toMatchObject({
      update: 2,
      unchanged: 1,
      delete: 1,
      create: 1,
    });
  });

  it('keeps no image of an unchanged connection, nor of one that is neither updated nor deleted', () => {
    const [same, stale, extra] = summarized('update', true);
    expect(same).toEqual({ name: 'same', _id: 'id-same', compared: [] });
    expect(stale?.compared?.map((f) => f.path)).toEqual(['/rdb_url']);
    expect(stale?.compared).toEqual([{ path: '/rdb_url' }]);
    expect(stale?.before?.load()).toMatchObject({ name: 'stale', password: MASK });
    expect(extra).toMatchObject({ name: 'extra', type: 'rdb-mysql' });
    expect(extra?.before?.load()).toMatchObject({ password: MASK });
    expect(JSON.stringify(extra?.before?.load())).not.toContain('clear-text-secret');
    expect(summarized('skip', false).map((t) => Object.keys(t))).toEqual(target.map(() => ['name', '_id']));
    expect(summarized('update', true, new Set(['same']))[1]).toEqual({ name: 'stale', _id: 'id-stale' });
  });
});

describe('planImport with --on-conflict update and --prune', () => {
  const entries = [entry('same'), entry('stale', { rdb_url: 'jdbc:mysql://new/db' }), entry('new-one')];
  const target = [
    { name: 'same', _id: 'id-same', connection: conn('same') },
    { name: 'stale', _id: 'id-stale', connection: conn('stale') },
    { name: 'extra', _id: 'id-extra', connection: conn('extra', { password: 'clear-text-secret' }) },
  ];
  const plan = (journal = new Map<string, JournaledWrite>(), prune = true) =>
    planImport({
      entries,
      target,
      journal,
      onConflict: 'update',
      prune,
      converge: helpers,
      check: noProblems,
    });

  it('a masked secret the target lacks is no reason to update (the PUT leaves it out): unchanged, so a re-run plans nothing; a clear one is', () => {
    const planOne = (body: Record<string, unknown>, held: Record<string, unknown> = {}) =>
      planImport({
        entries: [entry('lacks', body)],
        target: [{ name: 'lacks', _id: 'id-lacks', connection: conn('lacks', { password: '', ...held }) }],
        journal: new Map(),
        onConflict: 'update',
        converge: helpers,
        check: noProblems,
      }).steps[0];
    expect(planOne({})?.kind).toBe('unchanged');
    const field = (value: string) => [{ field_name: 'token', field_value: value, field_type: 'encrypted' }];
    expect(planOne({ custom_fields: field(MASK) }, { custom_fields: field('') })?.kind).toBe('unchanged');
    const withValue = planOne({ password: 'from-overrides-secret' });
    expect(withValue?.kind).toBe('update');
    expect(withValue?.kind === 'update' && withValue.fields.map((f) => f.path)).toEqual(['/password']);
  });

  it('updates what differs, leaves what is equal, deletes what the snapshot does not hold, counts every change', () => {
    const p = plan();
    expect(p.steps.map((s) => [s.name, s.kind])).toEqual([
      ['new-one', 'create'],
      ['same', 'unchanged'],
      ['stale', 'update'],
      ['extra', 'delete'],
    ]);
    expect(p.changes).toBe(3);
    const update = p.steps.find((s) => s.kind === 'update');
    // The masked secret is left out of the PUT body: the service keeps the stored one.
    const put = update?.kind === 'update' ? update.source.load() : undefined;
    expect(put?.body).toMatchObject({ name: 'stale', rdb_url: 'jdbc:mysql://new/db' });
    expect(put?.body).not.toHaveProperty('password');
    expect(put?.image).toEqual(put?.body);
    expect(put?.secretsSent).toEqual([]);
    const del = p.steps.find((s) => s.kind === 'delete');
    expect(JSON.stringify(del)).not.toContain('clear-text-secret');
    expect(del?.kind === 'delete' ? del.before.load().password : undefined).toBe(MASK);
  });

  it('without --prune deletes nothing; a name the journal says was deleted and is gone is done', () => {
    expect(plan(new Map(), false).steps.some((s) => s.kind === 'delete')).toBe(false);
    const p = planImport({
      entries,
      target: target.filter((t) => t.name !== 'extra'),
      journal: new Map([
        ['extra', { op: 'delete', state: 'in-doubt', type: 'rdb-mysql', targetName: 'extra' }],
      ]),
      onConflict: 'update',
      prune: true,
      converge: helpers,
      check: noProblems,
    });
    expect(p.steps.find((s) => s.name === 'extra')).toMatchObject({ kind: 'done', op: 'delete' });
    expect(p.changes).toBe(2);
  });

  it('the pre-flight counts creates, updates and deletes against --max-changes and a protected target', () => {
    const facts: PreflightFacts = {
      maxChanges: 2,
      target: { label: 'stg', name: 'stg', url: 'https://stg', protected: true },
      confirm: undefined,
      snapshotSourceUrl: undefined,
      allowSameSource: false,
      dryRun: false,
    };
    const messages = checkPreflight([[connectionKind, plan()]], facts).map((p) => p.message);
    expect(messages[0]).toMatch(
      /3 changes would be made \(1 creates, 1 updates, 1 deletes\), more than --max-changes 2/,
    );
    expect(messages[1]).toMatch(/protected/);
    const onlyDeletes = planImport({
      entries: [],
      target,
      journal: new Map(),
      onConflict: 'update',
      prune: true,
      converge: helpers,
      check: noProblems,
    });
    expect(
      checkPreflight([[connectionKind, onlyDeletes]], { ...facts, maxChanges: undefined })
        .map((p) => p.message)
        .join(),
    ).toMatch(/protected/);
  });
});

describe('images never hold a credential value', () => {
  it('masks template and name-floor secrets and encrypted custom fields; finds the secrets sent in clear', () => {
    const body = {
      name: 'x',
      type: 'rdb-mysql',
      _id: 'server',
      access_code: '1234',
      password: 'pw',
      empty_password: '',
      custom_fields: [{ field_name: 'k', field_type: 'encrypted', field_value: 'enc' }],
    };
    const image = makeSafeImage(body, catalog.secretFields('rdb-mysql'));
    expect(JSON.stringify(image)).not.toMatch(/1234|"pw"|enc"/);
    expect(image).not.toHaveProperty('_id');
    expect(image.empty_password).toBe('');
    expect(findClearSecrets(body, catalog.secretFields('rdb-mysql')).sort()).toEqual([
      '/access_code',
      '/custom_fields/0/field_value',
      '/password',
    ]);
    expect(dropMaskedValues(image)).toEqual({
      body: {
        name: 'x',
        type: 'rdb-mysql',
        empty_password: '',
        custom_fields: [{ field_name: 'k', field_type: 'encrypted' }],
      },
    });
  });
});

describe('undo: the run history', () => {
  it('takes the first before-image of a name, newest first, and skips what certainly failed', () => {
    const b1 = { name: 'u', type: 's3', v: 1 };
    const b2 = { name: 'u', type: 's3', v: 2 };
    const text = lines([
      begin,
      {
        kind: 'intent',
        object: 'connection',
        op: 'update',
        name: 'u',
        targetName: 'u',
        attempt: 1,
        at,
        before: b1,
        image: b2,
        secretsSent: ['/password'],
      },
      {
        kind: 'outcome',
        object: 'connection',
        op: 'update',
        result: 'updated',
        name: 'u',
        targetName: 'u',
        at,
      },
      {
        kind: 'intent',
        object: 'connection',
        op: 'create',
        name: 'n',
        targetName: 'n',
        attempt: 1,
        at,
        image: { name: 'n', type: 's3' },
      },
      {
        kind: 'outcome',
        object: 'connection',
        op: 'create',
        result: 'failed',
        name: 'n',
        targetName: 'n',
        httpStatus: 400,
        message: 'bad',
        at,
      },
      {
        kind: 'intent',
        object: 'connection',
        op: 'update',
        name: 'u',
        targetName: 'u',
        attempt: 1,
        at,
        before: b2,
        image: b2,
        secretsSent: [],
      },
      {
        kind: 'intent',
        object: 'connection',
        op: 'delete',
        name: 'd',
        targetName: 'd',
        attempt: 1,
        at,
        before: { name: 'd', type: 'smb' },
      },
      {
        kind: 'outcome',
        object: 'connection',
        op: 'delete',
        result: 'deleted',
        name: 'd',
        targetName: 'd',
        via: 'request',
        at,
      },
      { kind: 'intent', object: 'scan-profile', op: 'create', name: 'p', targetName: 'p', attempt: 1, at },
    ]);
    // Undo takes scan profiles back too: the profile's create (never settled) is a history, in doubt.
    const history = createRunHistory(1);
    recordsOf(text).forEach((record, index) => {
      history.add(record, index);
    });
    const histories = history.finish();
    expect(histories.map((h) => `${h.object}:${h.name}`)).toEqual([
      'scan-profile:p',
      'connection:d',
      'connection:u',
    ]);
    expect(histories[0]).toMatchObject({ firstOp: 'create', inDoubt: true });
    expect(histories[2]).toMatchObject({ firstOp: 'update', firstBefore: b1 });
    expect([...(histories[2]?.secretsSent ?? [])]).toEqual(['/password']);
  });

  it('an intent withdrawn (written ahead, never sent) is nothing to undo', () => {
    const history = createRunHistory(1);
    const records: JournalRecord[] = [
      {
        kind: 'intent',
        run: 1,
        object: 'connection',
        op: 'create',
        name: 'w',
        targetName: 'w',
        attempt: 1,
        at,
      },
      {
        kind: 'intent',
        run: 1,
        object: 'connection',
        op: 'create',
        name: 'o',
        targetName: 'o',
        attempt: 1,
        at,
      },
      { kind: 'withdrawn', run: 1, object: 'connection', name: 'w', targetName: 'w', attempt: 1, at },
    ];
    records.forEach((record, index) => {
      history.add(record, index);
    });
    // o stays: never settled, so in doubt; w was never sent.
    expect(history.finish().map((h) => h.name)).toEqual(['o']);
  });

  it('a withdrawn intent puts back an earlier one in doubt (a resumed run): the object stays to undo', () => {
    const before = { name: 'x', type: 's3' };
    const history = createRunHistory(1);
    const records: JournalRecord[] = [
      // The first process: x's DELETE sent, no answer (in doubt); p's create sent twice, no answer.
      {
        kind: 'intent',
        run: 1,
        object: 'connection',
        op: 'delete',
        name: 'x',
        targetName: 'x',
        attempt: 1,
        at,
        before,
      },
      {
        kind: 'intent',
        run: 1,
        object: 'scan-profile',
        op: 'create',
        name: 'p',
        targetName: 'p',
        attempt: 1,
        at,
      },
      // The resumed run writes x's and p's intents ahead, then stops before sending either.
      {
        kind: 'intent',
        run: 1,
        object: 'connection',
        op: 'delete',
        name: 'x',
        targetName: 'x',
        attempt: 1,
        at,
        before,
      },
      { kind: 'withdrawn', run: 1, object: 'connection', name: 'x', targetName: 'x', attempt: 1, at },
      {
        kind: 'intent',
        run: 1,
        object: 'scan-profile',
        op: 'create',
        name: 'p',
        targetName: 'p',
        attempt: 2,
        at,
      },
      { kind: 'withdrawn', run: 1, object: 'scan-profile', name: 'p', targetName: 'p', attempt: 2, at },
    ];
    records.forEach((record, index) => {
      history.add(record, index);
    });
    const histories = history.finish();
    expect(histories.map((h) => `${h.object}:${h.name}`)).toEqual(['scan-profile:p', 'connection:x']);
    expect(histories[1]).toMatchObject({ firstOp: 'delete', firstBefore: before, pending: true });
    expect(histories[0]).toMatchObject({ firstOp: 'create', inDoubt: true });
  });

  it("leaves a created object that was replaced since (same name, another id): never deletes someone else's", () => {
    const image = { name: 'c', type: 's3' };
    const text = lines([
      begin,
      {
        kind: 'intent',
        object: 'connection',
        op: 'create',
        name: 'c',
        targetName: 'c',
        attempt: 1,
        at,
        image,
      },
      {
        kind: 'outcome',
        object: 'connection',
        op: 'create',
        result: 'created',
        name: 'c',
        targetName: 'c',
        targetId: 'id-1',
        via: 'post',
        at,
      },
    ]);
    const history = createRunHistory(1);
    recordsOf(text).forEach((record, index) => {
      history.add(record, index);
    });
    const [h] = history.finish();
    if (h === undefined) throw new Error('no history');
    const step = <const T extends object>(own: T) =>
      Object.assign({ object: 'connection' as const, name: 'c', type: 's3' }, own);
    const unchanged = () => [];
    const plan = (current: { _id?: unknown }) =>
      planCreatedUndo(h, current, { includeInDoubt: true }, step, unchanged);
    expect(plan({ ...image, _id: 'id-2' })).toMatchObject({
      kind: 'left',
      reason: "replaced since the import created it (the import's id id-1, now id-2)",
    });
    expect(plan({ ...image, _id: 'id-1' })).toMatchObject({ kind: 'delete-created' });
    // A listing without ids proves nothing either way: compared by content, as before.
    expect(plan({ ...image, _id: undefined })).toMatchObject({ kind: 'delete-created' });
  });

  it('a scan profile the run updated is put back only while it is as the run left it', () => {
    const before = {
      scanProfile: { name: 'p', description: 'one', dataSourceList: [], scanTemplateId: 't1' },
      dataSourceNames: [],
    };
    const written = {
      scanProfile: { name: 'p', description: 'two', dataSourceList: [], scanTemplateId: 't1' },
      dataSourceNames: [],
    };
    const history = createRunHistory(1);
    const records = [
      begin,
      {
        kind: 'intent',
        object: 'scan-profile',
        op: 'update',
        name: 'p',
        targetName: 'p',
        attempt: 1,
        at,
        before,
        image: written,
      },
      {
        kind: 'outcome',
        object: 'scan-profile',
        op: 'update',
        result: 'updated',
        name: 'p',
        targetName: 'p',
        at,
      },
    ];
    recordsOf(lines(records)).forEach((record, index) => {
      history.add(record, index);
    });
    const [h] = history.finish();
    if (h === undefined) throw new Error('no history');
    const plan = (description: string) =>
      planProfileUndo(
        h,
        { _id: 'id-p', name: 'p', description, dataSourceList: [], scanTemplateId: 't1' },
        {
          includeInDoubt: false,
        },
      );
    expect(plan('two')).toMatchObject({ kind: 'put-back', fields: ['/description'] });
    expect(plan('one')).toMatchObject({ kind: 'reverted' });
    expect(plan('three')).toMatchObject({
      kind: 'left',
      reason: 'changed since the import updated it (/description; putting it back would lose that change)',
    });
  });
});
