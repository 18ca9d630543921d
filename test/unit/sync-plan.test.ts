/**
 * The planning rules every kind shares (src/sync/plan.ts), and the scan profile planner keeping them
 * as the connection planner does.
 */
import { describe, expect, it } from 'vitest';
import type { ProfileJournalState } from '../../src/sync/kinds/scan-profile/kind.js';
import { planProfiles } from '../../src/sync/kinds/scan-profile/kind.js';
import { chooseRenamedName, decideExisting, planKind } from '../../src/sync/plan.js';

describe('decideExisting', () => {
  it('skip leaves it, fail is a conflict, update compares, rename takes the next free name', () => {
    const taken = new Set(['a', 'a (2)']);
    expect(decideExisting('a', 'skip', taken)).toEqual({ kind: 'exists' });
    expect(decideExisting('a', 'fail', taken)).toEqual({ kind: 'conflict' });
    expect(decideExisting('a', 'update', taken)).toEqual({ kind: 'update' });
    expect(decideExisting('a', 'rename', taken)).toEqual({ kind: 'rename', targetName: 'a (3)' });
    // The name given is taken now: the next rename of the same name gets another.
    expect(decideExisting('a', 'rename', taken)).toEqual({ kind: 'rename', targetName: 'a (4)' });
    expect(chooseRenamedName('b', taken)).toBe('b (2)');
  });
});

describe('planKind: prune and journaled deletes', () => {
  it('deletes what is selected, in name order; reports journaled deletes whose object is gone', () => {
    type W = {
      op: 'create' | 'update' | 'delete';
      state: 'done' | 'failed' | 'in-doubt';
      targetName: string;
    };
    const w = (op: W['op'], state: W['state'], targetName: string): W => ({ op, state, targetName });
    const steps = planKind<string, { name: string }, W, string>(
      {
        nameOf: (name) => name,
        step: (name, d) => `${d.kind} ${name}`,
        remove: (a) => `delete ${a.name}`,
        removed: (name) => `deleted ${name}`,
      },
      {
        desired: ['wanted'],
        actual: [
          { name: 'z' },
          { name: 'b' },
          { name: 'outside' },
          { name: 'still-there' },
          { name: 'wanted' },
        ],
        journal: new Map([
          ['y', w('delete', 'in-doubt', 'y')],
          ['x', w('delete', 'done', 'x')],
          ['failed', w('delete', 'failed', 'failed')],
          ['still-there', w('delete', 'done', 'still-there')],
          ['updated', w('update', 'done', 'updated')],
          ['outside', w('delete', 'done', 'outside')],
        ]),
        onConflict: 'skip',
        only: { has: (name) => name !== 'outside' },
        prune: true,
      },
    );
    // still-there: its journaled delete is not done while the target holds it; it is deleted again.
    expect(steps).toEqual([
      'exists wanted',
      'delete b',
      'delete still-there',
      'delete z',
      'deleted x',
      'deleted y',
    ]);
  });

  it('the scan profile planner reports a journaled delete gone from the target as done, within --only', () => {
    const journal = new Map<string, ProfileJournalState>([
      ['gone', { state: 'in-doubt', op: 'delete', targetName: 'gone', targetId: 'pg', attempt: 1 }],
      ['other', { state: 'done', op: 'delete', targetName: 'other', targetId: 'po', attempt: 1 }],
    ]);
    const plan = planProfiles({
      profiles: [],
      included: true,
      targetProfiles: [],
      targetConnections: [],
      createdConnections: new Map(),
      journal,
      onConflict: 'skip',
      prune: true,
      allowRun: false,
      only: { has: (name) => name === 'gone' },
    });
    expect(plan.steps).toEqual([
      { kind: 'done', name: 'gone', action: 'delete', targetName: 'gone', targetId: 'pg', via: 'journal' },
    ]);
  });
});
