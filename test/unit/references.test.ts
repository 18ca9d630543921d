/**
 * The pure reference rules (src/connections/references.ts): what a connection needs in its target, the
 * check against what the target holds, and source-environment ids remapped or dropped.
 */
import { describe, expect, it } from 'vitest';
import {
  checkEntryReferences,
  createReferenceCollector,
  describeReferenceWarnings,
  readReferences,
  resolveSourceIds,
  type TargetReferences,
} from '../../src/connections/references.js';

const entry = (name: string, body: Record<string, unknown>) => ({ name, type: 'rdb-mysql', body });

describe('readReferences', () => {
  it('defaults the scanner group; a stored credential or certificate only when its flag is not false', () => {
    expect(readReferences({})).toEqual({
      scannerGroup: 'default',
      credentialId: undefined,
      certificateId: undefined,
    });
    expect(readReferences({ scanner_group: 'eu', credential_id: 'c', is_credential: true })).toMatchObject({
      scannerGroup: 'eu',
      credentialId: 'c',
    });
    expect(readReferences({ credential_id: 'c', is_credential: 'false' }).credentialId).toBeUndefined();
    expect(readReferences({ credential_id: '', is_credential: true }).credentialId).toBeUndefined();
    expect(readReferences({ certificate_id: 'ca', is_certificate: false }).certificateId).toBeUndefined();
    expect(readReferences({ certificate_id: 'ca' }).certificateId).toBe('ca');
  });
});

describe('checkEntryReferences', () => {
  const target: TargetReferences = {
    scannerGroups: { kind: 'available', names: new Set(['default']) },
    credentials: { kind: 'available', names: new Set(['svc-db']) },
  };
  it('names each missing group and credential on its field', () => {
    const problems = checkEntryReferences(
      entry('x', { scanner_group: 'eu', credential_id: 'svc-files', is_credential: true }),
      target,
    );
    expect(problems).toEqual([
      {
        entry: 'x',
        type: 'rdb-mysql',
        path: '/scanner_group',
        message: 'scanner group "eu" has no scanner in the target',
      },
      {
        entry: 'x',
        type: 'rdb-mysql',
        path: '/credential_id',
        message: 'stored credential "svc-files" does not exist in the target',
      },
    ]);
    expect(checkEntryReferences(entry('y', { credential_id: 'svc-db' }), target)).toEqual([]);
  });
  it('refuses nothing that could not be checked, and warns once per kind instead', () => {
    const unknown: TargetReferences = {
      scannerGroups: { kind: 'not-available' },
      credentials: { kind: 'not-available' },
    };
    const entries = [
      entry('a', { scanner_group: 'eu', credential_id: 'c1', certificate_id: 'ca' }),
      entry('b', { scanner_group: 'eu', credential_id: 'c1' }),
    ];
    for (const e of entries) expect(checkEntryReferences(e, unknown)).toEqual([]);
    const needs = (list: typeof entries) => {
      const collector = createReferenceCollector();
      for (const e of list) collector.add(e);
      return collector.needs();
    };
    expect(describeReferenceWarnings(needs(entries), unknown)).toEqual([
      'scanner groups could not be checked (the target does not list scanners): it must hold eu (2 entries)',
      'stored credentials could not be checked (the target does not list credentials): it must hold c1 (2 entries)',
      'certificates must exist in the target, cannot be checked: ca (a)',
    ]);
    expect(describeReferenceWarnings(needs([entries[1]!]), target)).toEqual([]);
  });
});

describe('resolveSourceIds', () => {
  it('drops source-environment ids; null and "" name nothing and stay', () => {
    const body = { name: 'x', defaultScanProfileId: 'p-src', defaultScanId: 's-src', other: 1 };
    const dropped = resolveSourceIds(body);
    expect(dropped.body).toEqual({ name: 'x', other: 1 });
    expect(dropped.changes.map((c) => `${c.kind} ${c.field}`)).toEqual([
      'dropped defaultScanProfileId',
      'dropped defaultScanId',
    ]);
    expect(body).toHaveProperty('defaultScanId', 's-src');

    const empty = { defaultScanProfileId: null, defaultScanId: '' };
    expect(resolveSourceIds(empty)).toEqual({ body: empty, changes: [] });
    expect(resolveSourceIds({ defaultScanId: 42 }).body).toEqual({});
  });
});
