/**
 * The planning rules every kind shares (src/sync/plan.ts), and the scan profile planner keeping them
 * as the connection planner does.
 */
import { describe, expect, it } from 'vitest';
import { type ProfileJournalState, planProfiles } from '../../src/importer/profile-plan.js';
import { chooseRenamedName, decideExisting, journaledDeletes, prunable } from '../../src/sync/plan.js';

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

describe('prunable and journaledDeletes', () => {
  it('deletes what is selected, in name order; reports journaled deletes whose object is gone', () => {
    const extra = [{ name: 'z' }, { name: 'b' }, { name: 'keep' }];
    expect(prunable(extra, (o) => o.name !== 'keep')).toEqual([{ name: 'b' }, { name: 'z' }]);
    const states: [string, { op: string; state: string }][] = [
      ['y', { op: 'delete', state: 'in-doubt' }],
      ['x', { op: 'delete', state: 'done' }],
      ['failed', { op: 'delete', state: 'failed' }],
      ['still-there', { op: 'delete', state: 'done' }],
      ['updated', { op: 'update', state: 'done' }],
      ['outside', { op: 'delete', state: 'done' }],
    ];
    const found = journaledDeletes(
      states,
      (s) => s.op === 'delete' && s.state !== 'failed',
      (name) => name === 'still-there',
      (name) => name !== 'outside',
    );
    expect(found.map(([name]) => name)).toEqual(['x', 'y']);
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
