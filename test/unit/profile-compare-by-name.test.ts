/**
 * `verify` and `diff` compare a scan profile's `dataSourceList` by connection name, whichever form each
 * side uses (api-notes [code]: names from BigID's CI action, `_id`s from the tutorial).
 */
import { describe, expect, it } from 'vitest';
import { compareProfileFields, nameDataSources, toComparableProfile } from '../../src/diff/scan-profiles.js';
import { isProfileServerField } from '../../src/profiles/server-fields.js';

const connections = new Map([
  ['000000000000000000000001', 'finance-s3'],
  ['000000000000000000000002', 'hr-db'],
]);
const base = {
  name: 'nightly',
  scanTemplateId: 't',
  schedule: { cronExpression: '0 2 * * *', timeZone: 'UTC' },
};

function comparable(profile: Record<string, unknown>) {
  return toComparableProfile(profile, nameDataSources(profile, connections), isProfileServerField);
}

describe('dataSourceList compared by connection name', () => {
  it('names on one side and ids on the other are equal', () => {
    const byName = comparable({ ...base, dataSourceList: ['finance-s3', 'hr-db'] });
    const byId = comparable({
      ...base,
      dataSourceList: ['000000000000000000000001', '000000000000000000000002'],
    });
    expect(compareProfileFields(byName, byId)).toEqual([]);
    expect(compareProfileFields(byId, byName)).toEqual([]);
  });

  it('a mixed list equals the same connections in either form', () => {
    const mixed = comparable({ ...base, dataSourceList: ['finance-s3', '000000000000000000000002'] });
    const byName = comparable({ ...base, dataSourceList: ['finance-s3', 'hr-db'] });
    expect(compareProfileFields(mixed, byName)).toEqual([]);
  });

  it('another connection is a difference, named by connection name', () => {
    const a = comparable({ ...base, dataSourceList: ['finance-s3'] });
    const b = comparable({ ...base, dataSourceList: ['000000000000000000000002'] });
    expect(compareProfileFields(a, b)).toEqual([
      { path: '/dataSourceList', from: ['finance-s3'], to: ['hr-db'] },
    ]);
  });
});
