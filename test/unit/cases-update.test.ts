import { describe, expect, it } from 'vitest';
import { checkAuditReason } from '../../src/cases/resolve.js';
import { compareReportedIds } from '../../src/cases/update.js';
import type { ResolvedEnvironment } from '../../src/config.js';
import { PreflightError, UsageError } from '../../src/errors.js';
import { findMissingDataSources } from '../../src/profiles/create.js';
import { assertWriteConfirmed } from '../../src/protected.js';
import { makeEnvironment } from '../http/client-fixture.js';

/** A resolved environment named `prod`. */
function environment(overrides: Partial<ResolvedEnvironment>): ResolvedEnvironment {
  return makeEnvironment({ name: 'prod', label: 'prod', ...overrides });
}

describe('compareReportedIds', () => {
  it('lists matched-but-not-reported and reported-but-not-matched ids in order', () => {
    expect(compareReportedIds(['a', 'b', 'c'], ['c', 'a'])).toEqual({ missing: ['b'], unexpected: [] });
    expect(compareReportedIds(['a'], ['a', 'z', 'y'])).toEqual({ missing: [], unexpected: ['z', 'y'] });
  });
});

describe('checkAuditReason', () => {
  it('trims and refuses an empty reason', () => {
    expect(checkAuditReason('  why \n')).toBe('why');
    expect(() => checkAuditReason('  ')).toThrow(UsageError);
    expect(() => checkAuditReason(undefined)).toThrow(UsageError);
  });
});

describe('assertWriteConfirmed', () => {
  it('needs --confirm NAME for a protected environment and refuses a --confirm naming another', () => {
    expect(() => assertWriteConfirmed(environment({ protected: true }), undefined)).toThrow(PreflightError);
    expect(() => assertWriteConfirmed(environment({ protected: true }), 'prod')).not.toThrow();
    expect(() => assertWriteConfirmed(environment({ protected: true }), 'staging')).toThrow(/does not name/);
    expect(() => assertWriteConfirmed(environment({}), undefined)).not.toThrow();
    expect(() => assertWriteConfirmed(environment({}), 'staging')).toThrow(PreflightError);
  });
});

describe('findMissingDataSources', () => {
  it('accepts ids and names, and reports the others with their index', () => {
    const connections = [
      { _id: 'aaaaaaaaaaaaaaaaaaaaaaaa', name: 'one' },
      { _id: undefined, name: 'two' },
    ];
    expect(
      findMissingDataSources(
        ['one', 'aaaaaaaaaaaaaaaaaaaaaaaa', 'three', 'two', 'bbbbbbbbbbbbbbbbbbbbbbbb'],
        connections,
      ),
    ).toEqual([
      { index: 2, ref: 'three' },
      { index: 4, ref: 'bbbbbbbbbbbbbbbbbbbbbbbb' },
    ]);
  });
});
