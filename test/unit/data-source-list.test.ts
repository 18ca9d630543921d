/**
 * `remapDataSourceList`: each element keeps its form (api-notes [code]: BigID's CI action lists data
 * sources by name, the tutorial by `_id`; a restore keeps the form the source used).
 */
import { describe, expect, it } from 'vitest';
import { remapDataSourceList } from '../../src/profiles/data-source-list.js';

const SOURCE_ID = { aaaaaaaaaaaaaaaaaaaaaaa1: 'finance-s3', aaaaaaaaaaaaaaaaaaaaaaa2: 'hr-db' } as Record<
  string,
  string
>;
const TARGET_ID = { 'finance-s3': 'bbbbbbbbbbbbbbbbbbbbbbb1', 'hr-db': 'bbbbbbbbbbbbbbbbbbbbbbb2' } as Record<
  string,
  string
>;
const target = {
  targetNameOf: (n: string) => (n in TARGET_ID ? n : undefined),
  targetIdOf: (n: string) => TARGET_ID[n],
};

describe('remapDataSourceList', () => {
  it('an id becomes the target id of the same connection', () => {
    const r = remapDataSourceList(['aaaaaaaaaaaaaaaaaaaaaaa1'], {
      ...target,
      nameOfSourceId: (id) => SOURCE_ID[id],
    });
    expect(r).toEqual({
      ok: true,
      elements: [
        {
          ref: 'aaaaaaaaaaaaaaaaaaaaaaa1',
          form: 'id',
          sourceName: 'finance-s3',
          targetName: 'finance-s3',
          to: 'bbbbbbbbbbbbbbbbbbbbbbb1',
        },
      ],
    });
  });

  it('a name stays a name, with or without a recorded name', () => {
    for (const recordedNames of [['hr-db'], [null], undefined]) {
      const r = remapDataSourceList(['hr-db'], { ...target, ...(recordedNames ? { recordedNames } : {}) });
      expect(r.ok && r.elements.map((e) => [e.form, e.to])).toEqual([['name', 'hr-db']]);
    }
  });

  it('a mixed list keeps each form and the order', () => {
    const r = remapDataSourceList(['hr-db', 'aaaaaaaaaaaaaaaaaaaaaaa1'], {
      ...target,
      recordedNames: ['hr-db', 'finance-s3'],
    });
    expect(r.ok && r.elements.map((e) => e.to)).toEqual(['hr-db', 'bbbbbbbbbbbbbbbbbbbbbbb1']);
  });

  it('follows a connection renamed in the target: a name becomes the new name, an id its id', () => {
    const renamed = {
      targetNameOf: (n: string) => (n === 'hr-db' ? 'hr-db (2)' : undefined),
      targetIdOf: (n: string) => (n === 'hr-db (2)' ? 'cccccccccccccccccccccccc' : undefined),
    };
    const r = remapDataSourceList(['hr-db', 'aaaaaaaaaaaaaaaaaaaaaaa2'], {
      ...renamed,
      recordedNames: ['hr-db', 'hr-db'],
    });
    expect(r.ok && r.elements.map((e) => e.to)).toEqual(['hr-db (2)', 'cccccccccccccccccccccccc']);
  });

  it('an id whose target id is unknown is sent as the target name', () => {
    const r = remapDataSourceList(['aaaaaaaaaaaaaaaaaaaaaaa2'], {
      targetNameOf: (n) => n,
      recordedNames: ['hr-db'],
    });
    expect(r.ok && r.elements[0]?.to).toBe('hr-db');
  });

  it('names every element it cannot remap', () => {
    const r = remapDataSourceList(['ffffffffffffffffffffffff', 'gone-db', 'hr-db'], {
      ...target,
      recordedNames: [null, 'gone-db', null],
    });
    expect(r).toEqual({
      ok: false,
      problems: [
        {
          index: 0,
          ref: 'ffffffffffffffffffffffff',
          message:
            'data source ffffffffffffffffffffffff has no connection name in the snapshot and no connection of that name is in the target',
        },
        {
          index: 1,
          ref: 'gone-db',
          message: "connection 'gone-db' is neither in the target nor created by this import",
          causedBy: 'gone-db',
        },
      ],
    });
  });
});
