import { describe, expect, it } from 'vitest';
import type { ConnectionKey } from '../../src/api/types.js';
import { type IdMap, needsSourceConnections, planProfileClone } from '../../src/profiles/plan.js';
import { stripProfileServerFields } from '../../src/profiles/server-fields.js';

const SRC: ConnectionKey[] = [
  { _id: 'aaaaaaaaaaaaaaaaaaaaaa01', name: 'finance-s3' },
  { _id: 'aaaaaaaaaaaaaaaaaaaaaa02', name: 'hr-db' },
  { _id: 'aaaaaaaaaaaaaaaaaaaaaa03', name: 'only-in-source' },
];
const TGT: ConnectionKey[] = [
  { _id: 'bbbbbbbbbbbbbbbbbbbbbb01', name: 'finance-s3' },
  { _id: 'bbbbbbbbbbbbbbbbbbbbbb02', name: 'hr-db' },
  { _id: 'bbbbbbbbbbbbbbbbbbbbbb03', name: 'crm' },
];

function profile(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    _id: 'cccccccccccccccccccccc01',
    name: 'weekly',
    dataSourceList: ['aaaaaaaaaaaaaaaaaaaaaa01', 'aaaaaaaaaaaaaaaaaaaaaa02'],
    scanTemplateId: 't1',
    schedule: { cronExpression: '0 2 * * *', timeZone: 'UTC' },
    active: true,
    owners: ['dpo@example.com'],
    scanType: 'dsScan',
    createdAt: '2024-01-01T00:00:00.000Z',
    updatedAt: '2024-01-01T00:00:00.000Z',
    ...overrides,
  };
}

describe('planProfileClone', () => {
  it('maps source ids to target ids by name and keeps unknown fields verbatim, without server fields', () => {
    const p = profile();
    const plan = planProfileClone({
      profiles: [{ sourceId: 'cccccccccccccccccccccc01', profile: p }],
      sourceConnections: SRC,
      targetConnections: TGT,
      allowRun: false,
    });
    expect(plan.problems).toEqual([]);
    const step = plan.steps[0];
    expect(step?.kind).toBe('create');
    if (step?.kind !== 'create') return;
    expect(step.body.dataSourceList).toEqual(['bbbbbbbbbbbbbbbbbbbbbb01', 'bbbbbbbbbbbbbbbbbbbbbb02']);
    expect(step.body).not.toHaveProperty('_id');
    expect(step.body).not.toHaveProperty('createdAt');
    expect(step.body).not.toHaveProperty('updatedAt');
    expect({ ...step.body, dataSourceList: p.dataSourceList }).toEqual(stripProfileServerFields(p));
    expect(Object.keys(step.body)).toEqual(Object.keys(stripProfileServerFields(p)));
    expect(step.dataSources.map((m) => m.via)).toEqual(['name', 'name']);
  });

  it('prefers the id map and falls back to the name when the mapped id is not in the target', () => {
    const idMap: IdMap = new Map([
      ['aaaaaaaaaaaaaaaaaaaaaa01', { name: 'finance-s3', targetId: 'bbbbbbbbbbbbbbbbbbbbbb01' }],
      ['aaaaaaaaaaaaaaaaaaaaaa02', { name: 'hr-db', targetId: 'ffffffffffffffffffffffff' }],
    ]);
    const plan = planProfileClone({
      profiles: [{ sourceId: 'x', profile: profile() }],
      sourceConnections: [],
      targetConnections: TGT,
      idMap,
      allowRun: false,
    });
    const step = plan.steps[0];
    if (step?.kind !== 'create') throw new Error(`expected create, got ${JSON.stringify(step)}`);
    expect(step.dataSources).toEqual([
      { from: 'aaaaaaaaaaaaaaaaaaaaaa01', to: 'bbbbbbbbbbbbbbbbbbbbbb01', name: 'finance-s3', via: 'id-map' },
      { from: 'aaaaaaaaaaaaaaaaaaaaaa02', to: 'bbbbbbbbbbbbbbbbbbbbbb02', name: 'hr-db', via: 'name' },
    ]);
  });

  it('passes names through as names when the target has them', () => {
    const plan = planProfileClone({
      profiles: [
        { sourceId: 'x', profile: profile({ dataSourceList: ['crm', 'aaaaaaaaaaaaaaaaaaaaaa01'] }) },
      ],
      sourceConnections: SRC,
      targetConnections: TGT,
      allowRun: false,
    });
    const step = plan.steps[0];
    if (step?.kind !== 'create') throw new Error('expected create');
    expect(step.body.dataSourceList).toEqual(['crm', 'bbbbbbbbbbbbbbbbbbbbbb01']);
    expect(step.dataSources[0]?.via).toBe('name-passthrough');
  });

  it('blocks profiles whose connections are missing in the target and lists every missing one', () => {
    const plan = planProfileClone({
      profiles: [
        {
          sourceId: 'p1',
          profile: profile({ name: 'a', dataSourceList: ['aaaaaaaaaaaaaaaaaaaaaa03', 'ghost-db'] }),
        },
        { sourceId: 'p2', profile: profile({ name: 'b', dataSourceList: ['dddddddddddddddddddddd99'] }) },
        { sourceId: 'p3', profile: profile({ name: 'c' }) },
      ],
      sourceConnections: SRC,
      targetConnections: TGT,
      allowRun: false,
    });
    expect(plan.steps.map((s) => s.kind)).toEqual(['blocked', 'blocked', 'create']);
    expect(plan.missingConnections).toEqual(['dddddddddddddddddddddd99', 'ghost-db', 'only-in-source']);
    expect(plan.problems.map((p) => `${p.entry} ${p.path}`)).toEqual([
      'a /dataSourceList/0',
      'a /dataSourceList/1',
      'b /dataSourceList/0',
    ]);
  });

  it('refuses one-time profiles unless allowRun', () => {
    const input = {
      profiles: [{ sourceId: 'p1', profile: profile({ schedule: undefined, isSingleRunScan: true }) }],
      sourceConnections: SRC,
      targetConnections: TGT,
    };
    const refused = planProfileClone({ ...input, allowRun: false });
    expect(refused.steps[0]?.kind).toBe('blocked');
    expect(refused.problems[0]?.path).toBe('/isSingleRunScan');
    const allowed = planProfileClone({ ...input, allowRun: true });
    expect(allowed.steps[0]).toMatchObject({ kind: 'create', singleRun: true });
  });

  it('refuses two source profiles with the same name', () => {
    const plan = planProfileClone({
      profiles: [
        { sourceId: 'p1', profile: profile() },
        { sourceId: 'p2', profile: profile() },
      ],
      sourceConnections: SRC,
      targetConnections: TGT,
      allowRun: false,
    });
    expect(plan.steps.map((s) => s.kind)).toEqual(['create', 'blocked']);
  });

  it('needs the source list only for ids the id map does not cover', () => {
    const profiles = [
      { sourceId: 'p', profile: profile({ dataSourceList: ['aaaaaaaaaaaaaaaaaaaaaa01', 'crm'] }) },
    ];
    expect(needsSourceConnections(profiles, undefined)).toBe(true);
    expect(
      needsSourceConnections(profiles, new Map([['aaaaaaaaaaaaaaaaaaaaaa01', { name: 'finance-s3' }]])),
    ).toBe(false);
  });
});
