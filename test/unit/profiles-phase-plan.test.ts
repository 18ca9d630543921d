/**
 * The pure plan of the import's scan profile phase: journal states (done, in doubt found / not found),
 * one-time profiles, data sources followed through renames and kept as names, `--only`, and the
 * pre-flight problems.
 */
import { describe, expect, it } from 'vitest';
import type { SnapshotScanProfile } from '../../src/model/scan-profile.js';
import { stripProfileServerFields } from '../../src/profiles/server-fields.js';
import { StepRefused } from '../../src/sync/execute.js';
import { replayJournal, writesOf } from '../../src/sync/journal/replay.js';
import type { ProfileJournalState, ProfilePlanInput } from '../../src/sync/kinds/scan-profile/kind.js';
import { placeProfileBody, planProfiles } from '../../src/sync/kinds/scan-profile/kind.js';

const SCHEDULE = { cronExpression: '0 2 * * *', timeZone: 'UTC' };

function entry(name: string, list: string[], names: (string | null)[], extra = {}): SnapshotScanProfile {
  return {
    scanProfile: {
      _id: `${name}-id`,
      name,
      dataSourceList: list,
      scanTemplateId: 't',
      schedule: SCHEDULE,
      ...extra,
    },
    dataSourceNames: names,
  };
}

function input(overrides: Partial<ProfilePlanInput>): ProfilePlanInput {
  return {
    profiles: [],
    included: true,
    targetProfiles: [],
    targetConnections: [{ name: 'alpha', _id: 'ta' }],
    createdConnections: new Map(),
    journal: new Map(),
    onConflict: 'skip',
    prune: false,
    allowRun: false,
    only: undefined,
    ...overrides,
  };
}

describe('planProfiles', () => {
  it('plans nothing for a snapshot that does not include profiles', () => {
    expect(planProfiles(input({ included: false, profiles: [entry('p', ['s1'], ['alpha'])] }))).toEqual({
      steps: [],
      problems: [],
    });
  });

  it('follows a connection renamed by this run, keeps a name-listed source as a name, and builds the body', () => {
    const plan = planProfiles(
      input({
        profiles: [entry('p', ['s-beta', 'alpha'], ['beta', 'alpha'])],
        createdConnections: new Map([['beta', 'beta (2)']]),
      }),
    );
    const step = plan.steps[0];
    expect(step?.kind).toBe('create');
    if (step?.kind !== 'create') return;
    expect(step.dataSources).toEqual([
      { ref: 's-beta', targetName: 'beta (2)', asName: false },
      { ref: 'alpha', targetName: 'alpha', asName: true },
    ]);
    // The body as the import's profile write builds it (`kinds/scan-profile/import.ts`): server fields dropped.
    const build = (ids: ReadonlyMap<string, string>) =>
      placeProfileBody(
        { ...stripProfileServerFields(step.profile), name: step.targetName },
        step.dataSources,
        ids,
        ' (was its creation refused?)',
      );
    expect(
      build(
        new Map([
          ['alpha', 'ta'],
          ['beta (2)', 'tb2'],
        ]),
      ),
    ).toEqual({ name: 'p', dataSourceList: ['tb2', 'alpha'], scanTemplateId: 't', schedule: SCHEDULE });
    // A connection whose creation failed: the profile fails without a request.
    expect(() => build(new Map([['alpha', 'ta']]))).toThrow(
      new StepRefused("connection 'beta (2)' is not in the target (was its creation refused?)"),
    );
  });

  it('refuses a data source with no name and no connection of that name, and one neither in the target nor created', () => {
    const plan = planProfiles(
      input({ profiles: [entry('p', ['65a1000000000000000000ff', 'x'], [null, 'gone'])] }),
    );
    expect(plan.steps.map((s) => s.kind)).toEqual(['blocked']);
    expect(plan.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      '/dataSourceList/0: data source 65a1000000000000000000ff has no connection name in the snapshot and no connection of that name is in the target',
      "/dataSourceList/1: connection 'gone' is neither in the target nor created by this import",
    ]);
  });

  it('skips a one-time profile without allowRun (no problem), creates it with', () => {
    const oneTime = entry('once', ['s1'], ['alpha'], { isSingleRunScan: true, schedule: undefined });
    expect(planProfiles(input({ profiles: [oneTime] })).steps[0]).toMatchObject({ kind: 'skipped' });
    expect(planProfiles(input({ profiles: [oneTime] })).problems).toEqual([]);
    expect(planProfiles(input({ profiles: [oneTime], allowRun: true })).steps[0]).toMatchObject({
      kind: 'create',
    });
  });

  it('resumes from the journal: done stays done; an in-doubt create is found by the name sent, or sent again', () => {
    const profiles = [
      entry('a', ['s1'], ['alpha']),
      entry('b', ['s1'], ['alpha']),
      entry('c', ['s1'], ['alpha']),
    ];
    const journal = new Map<string, ProfileJournalState>([
      ['a', { state: 'done', op: 'create', targetName: 'a', targetId: 'pa', attempt: 1 }],
      ['b', { state: 'in-doubt', op: 'create', targetName: 'b (2)', targetId: undefined, attempt: 1 }],
      ['c', { state: 'in-doubt', op: 'create', targetName: 'c', targetId: undefined, attempt: 1 }],
    ]);
    const plan = planProfiles(
      input({
        profiles,
        journal,
        // `a` is in the target (created by the earlier run), `b (2)` too (applied before the crash).
        targetProfiles: [
          { _id: 'pa', name: 'a', dataSourceList: ['ta'], scanTemplateId: 't' },
          { _id: 'pb', name: 'b (2)', dataSourceList: ['ta'], scanTemplateId: 't' },
          { _id: 'pb0', name: 'b', dataSourceList: ['ta'], scanTemplateId: 't' },
        ],
      }),
    );
    expect(plan.steps).toEqual([
      { kind: 'done', name: 'a', action: 'create', targetName: 'a', targetId: 'pa', via: 'journal' },
      { kind: 'done', name: 'b', action: 'create', targetName: 'b (2)', targetId: 'pb', via: 'lookup' },
      expect.objectContaining({ kind: 'create', name: 'c', targetName: 'c', attempt: 2 }),
    ]);
  });

  it('replays intents and outcomes (as journals of format 1 wrote them) into states, the last record winning', () => {
    const begin = {
      kind: 'begin',
      formatVersion: 1,
      snapshotSha256: 'a',
      targetUrl: 'http://t',
      tool: 't',
      at: 't',
    };
    const records = [
      begin,
      { kind: 'profile-intent', name: 'a', action: 'create', targetName: 'a', attempt: 1, at: 't' },
      { kind: 'profile-intent', name: 'b', action: 'create', targetName: 'b', attempt: 1, at: 't' },
      {
        kind: 'profile-outcome',
        name: 'b',
        action: 'create',
        result: 'done',
        targetName: 'b',
        targetId: 'pb',
        via: 'request',
        at: 't',
      },
    ];
    const replay = replayJournal(records.map((r) => `${JSON.stringify(r)}\n`).join(''));
    const states = writesOf(replay.runs.at(-1), 'scan-profile');
    expect(states.get('a')).toMatchObject({
      state: 'in-doubt',
      op: 'create',
      targetName: 'a',
      targetId: undefined,
      attempt: 1,
    });
    expect(states.get('b')).toMatchObject({ state: 'done', op: 'create', targetName: 'b', targetId: 'pb' });
  });

  it('with --only restores and prunes only the named profiles', () => {
    const plan = planProfiles(
      input({
        profiles: [entry('a', ['s1'], ['alpha']), entry('b', ['s1'], ['alpha'])],
        targetProfiles: [
          { _id: 'x1', name: 'extra-1', dataSourceList: [], scanTemplateId: 't' },
          { _id: 'x2', name: 'extra-2', dataSourceList: [], scanTemplateId: 't' },
        ],
        prune: true,
        only: new Set(['b', 'extra-2']),
      }),
    );
    expect(plan.steps.map((s) => [s.kind, s.name])).toEqual([
      ['create', 'b'],
      ['delete', 'extra-2'],
    ]);
  });
});
