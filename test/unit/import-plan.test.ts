import { describe, expect, it } from 'vitest';
import type { Problem } from '../../src/errors.js';
import { checkPreflight, type PreflightFacts } from '../../src/importer/preflight.js';
import {
  connectionKind,
  type JournaledWrite,
  PLAN_STEP_KINDS,
  type PlanEntry,
  type PlanStep,
  type PreparedEntry,
  planImport,
} from '../../src/sync/kinds/connection/kind.js';
import { describeStep } from '../../src/sync/kinds/connection/render.js';
import { chooseRenamedName } from '../../src/sync/plan.js';

const entry = (name: string, type = 's3', extra: Record<string, unknown> = {}): PreparedEntry => ({
  name,
  type,
  sourceId: `src-${name}`,
  body: { name, type, ...extra },
});
const noProblems = (): Problem[] => [];
const kinds = (steps: readonly PlanStep[]) => Object.fromEntries(steps.map((s) => [s.name, s.kind]));

describe('planImport', () => {
  const entries = [entry('new-one'), entry('taken'), entry('was-done'), entry('in-doubt'), entry('bad')];
  const target = [{ name: 'taken', _id: 't1' }, { name: 'was-done', _id: 't2' }, { name: 'other' }];
  const journal = new Map<string, JournaledWrite>([
    ['was-done', { op: 'create', state: 'done', targetName: 'was-done', targetId: 't2' }],
    ['in-doubt', { op: 'create', state: 'in-doubt', targetName: 'in-doubt' }],
  ]);
  const check = (e: PlanEntry, prepared: () => PreparedEntry): Problem[] =>
    prepared().name === 'bad' ? [{ entry: e.name, path: '/password', message: 'masked' }] : [];

  it('decides create, exists, done, reconcile and invalid with --on-conflict skip', () => {
    const plan = planImport({ entries, target, journal, onConflict: 'skip', check });
    expect(kinds(plan.steps)).toEqual({
      bad: 'invalid',
      'in-doubt': 'reconcile',
      'new-one': 'create',
      taken: 'exists',
      'was-done': 'done',
    });
    expect(plan.steps.map((s) => s.name)).toEqual(['bad', 'in-doubt', 'new-one', 'taken', 'was-done']);
    expect(plan.counts).toMatchObject({
      create: 1,
      reconcile: 1,
      exists: 1,
      done: 1,
      invalid: 1,
      rename: 0,
      conflict: 0,
    });
    expect(plan.sends).toBe(2);
    const exists = plan.steps.find((s) => s.name === 'taken');
    expect(exists).toMatchObject({ kind: 'exists', targetId: 't1' });
  });

  it('marks a name taken in the target as conflict with fail, which the pre-flight refuses', () => {
    const plan = planImport({ entries, target, journal, onConflict: 'fail', check: noProblems });
    expect(kinds(plan.steps).taken).toBe('conflict');
    // A journal-done entry is ours, not a conflict, even though its name is in the target.
    expect(kinds(plan.steps)['was-done']).toBe('done');
    const problems = checkPreflight([[connectionKind, plan]], facts());
    expect(problems).toEqual([
      expect.objectContaining({ entry: 'taken', message: expect.stringMatching(/--on-conflict fail/) }),
    ]);
  });

  it('renames with rename, to the first free "(n)" name that nobody holds', () => {
    const plan = planImport({
      entries: [entry('taken'), entry('taken (2)')],
      target: [{ name: 'taken' }, { name: 'taken (3)' }],
      journal: new Map(),
      onConflict: 'rename',
      check: noProblems,
    });
    const step = plan.steps.find((s) => s.name === 'taken');
    expect(step).toMatchObject({ kind: 'rename', targetName: 'taken (4)' });
    expect(step?.kind === 'rename' && step.source.load().body).toMatchObject({ name: 'taken (4)' });
    expect(step && /^[\w\-\s():]+$/.test((step as { targetName: string }).targetName)).toBe(true);
    expect(chooseRenamedName('x', new Set(['x (2)']))).toBe('x (3)');
  });

  it('reconciles an in-doubt rename under the name its intent used, not a new one', () => {
    const plan = planImport({
      entries: [entry('taken')],
      target: [{ name: 'taken' }, { name: 'taken (2)' }],
      journal: new Map([
        [
          'taken',
          { op: 'create', state: 'in-doubt', targetName: 'taken (2)', intentAt: '2026-01-01T00:00:01Z' },
        ],
      ]),
      onConflict: 'rename',
      check: noProblems,
    });
    const step = plan.steps[0];
    // The intent's time goes with it: the executor's `not ours` test compares the found object's stamp.
    expect(step).toMatchObject({
      kind: 'reconcile',
      targetName: 'taken (2)',
      intentAt: '2026-01-01T00:00:01Z',
    });
    expect(step?.kind === 'reconcile' && step.source.load().body).toMatchObject({ name: 'taken (2)' });
  });

  it('holds no body: prepares an entry only to check it and when a send step is loaded, never for done or existing ones', () => {
    const prepared: string[] = [];
    const lean = (name: string) => ({ name, type: 's3', sourceId: undefined });
    const plan = planImport({
      entries: [lean('new'), lean('done'), lean('there')],
      prepare: (e) => {
        prepared.push(e.name);
        return { ...e, body: { name: e.name, type: e.type, bucket: `b-${e.name}` } };
      },
      target: [{ name: 'there' }, { name: 'done', _id: 'id-1' }],
      journal: new Map([
        ['done', { op: 'create', state: 'done', targetName: 'done', targetId: 'id-1' } as JournaledWrite],
      ]),
      onConflict: 'skip',
      // As the import's check does for an entry it did not check while the target was listed.
      check: (_entry, prepare) => {
        prepare();
        return [];
      },
    });
    expect(plan.steps.map((s) => `${s.name}:${s.kind}`)).toEqual(['done:done', 'new:create', 'there:exists']);
    expect(prepared).toEqual(['new']);
    expect(JSON.stringify(plan.steps)).not.toContain('b-new');
    const send = plan.steps.find((s) => s.kind === 'create');
    expect(send?.kind === 'create' && send.source.load().body).toEqual({
      name: 'new',
      type: 's3',
      bucket: 'b-new',
    });
    expect(prepared).toEqual(['new', 'new']);

    // An entry checked before (while the target was listed) is not prepared for its check again.
    prepared.length = 0;
    planImport({
      entries: [lean('new')],
      prepare: (e) => {
        prepared.push(e.name);
        return { ...e, body: { name: e.name, type: e.type } };
      },
      target: [],
      journal: new Map(),
      onConflict: 'skip',
      check: noProblems,
    });
    expect(prepared).toEqual([]);
  });

  it('narrows to --only, treats a failed journal entry as new, and flags a duplicated name', () => {
    const plan = planImport({
      entries: [entry('a'), entry('b'), entry('b'), entry('c')],
      target: [],
      journal: new Map([['a', { op: 'create', state: 'failed', targetName: 'a' } as JournaledWrite]]),
      onConflict: 'skip',
      only: new Set(['a', 'b']),
      check: noProblems,
    });
    expect(plan.steps.map((s) => `${s.name}:${s.kind}`)).toEqual(['a:create', 'b:create', 'b:invalid']);
  });

  it('describes every kind', () => {
    const plan = planImport({ entries, target, journal, onConflict: 'skip', check });
    for (const step of plan.steps) expect(describeStep(step)).toContain(step.name);
    expect(PLAN_STEP_KINDS).toHaveLength(10);
  });
});

function facts(over: Partial<PreflightFacts> = {}): PreflightFacts {
  return {
    maxChanges: undefined,
    target: { label: 'dr', name: 'dr', url: 'https://dr.example.com', protected: false },
    confirm: undefined,
    snapshotSourceUrl: 'https://prod.example.com',
    allowSameSource: false,
    dryRun: false,
    ...over,
  };
}

describe('checkPreflight', () => {
  const plan = planImport({
    entries: [entry('a'), entry('b'), entry('c')],
    target: [],
    journal: new Map(),
    onConflict: 'skip',
    check: noProblems,
  });

  it('passes a plain plan', () => {
    expect(checkPreflight([[connectionKind, plan]], facts())).toEqual([]);
  });
  it('refuses more creates than --max-changes', () => {
    expect(checkPreflight([[connectionKind, plan]], facts({ maxChanges: 2 }))[0]?.message).toMatch(
      /3 connections would be created.*--max-changes 2/,
    );
    expect(checkPreflight([[connectionKind, plan]], facts({ maxChanges: 3 }))).toEqual([]);
  });
  it('refuses a protected target without the right --confirm, except in a dry run', () => {
    const target = { label: 'dr', name: 'dr', url: 'https://dr.example.com', protected: true };
    expect(checkPreflight([[connectionKind, plan]], facts({ target }))[0]?.message).toMatch(
      /dr is a protected environment; pass --confirm dr to write to it/,
    );
    expect(checkPreflight([[connectionKind, plan]], facts({ target, confirm: 'prod' }))[0]?.message).toMatch(
      /--confirm prod does not name the environment written to \(--to dr\)/,
    );
    expect(checkPreflight([[connectionKind, plan]], facts({ target, confirm: 'dr' }))).toEqual([]);
    expect(checkPreflight([[connectionKind, plan]], facts({ target, dryRun: true }))).toEqual([]);
  });
  it('refuses importing into the environment the snapshot came from, unless --allow-same-source', () => {
    const same = facts({ snapshotSourceUrl: 'https://DR.example.com/' });
    expect(checkPreflight([[connectionKind, plan]], same)[0]?.message).toMatch(/--allow-same-source/);
    expect(checkPreflight([[connectionKind, plan]], { ...same, allowSameSource: true })).toEqual([]);
  });
});
