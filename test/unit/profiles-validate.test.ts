import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { InputFileError } from '../../src/errors.js';
import { parseIdMap } from '../../src/profiles/id-map.js';
import {
  checkCronExpression,
  checkProfileDocument,
  checkTimeZone,
  loadProfileSchema,
  readProfileFile,
} from '../../src/profiles/validate-profile.js';
import type { SchemaCheck } from '../../src/schema/ajv.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let check: SchemaCheck;
beforeAll(async () => {
  check = await loadProfileSchema();
});

const base = { name: 'weekly', dataSourceList: ['finance-s3'], scanTemplateId: '64b7f0c2a1d3e4f5a6b7c801' };

describe('profile document checks', () => {
  it('accepts a scheduled and a one-time profile, with unknown fields', () => {
    expect(
      checkProfileDocument(
        { ...base, schedule: { cronExpression: '0 2 * * 1-5', timeZone: 'Europe/Berlin' }, owners: ['x'] },
        check,
      ),
    ).toEqual([]);
    expect(checkProfileDocument({ ...base, isSingleRunScan: true, active: true }, check)).toEqual([]);
  });

  it('says clearly when neither or both of isSingleRunScan and schedule are given', () => {
    expect(checkProfileDocument(base, check)).toEqual([
      { path: '', message: expect.stringMatching(/either "isSingleRunScan": true or a "schedule"/) },
    ]);
    const both = checkProfileDocument(
      { ...base, isSingleRunScan: true, schedule: { cronExpression: '0 2 * * *', timeZone: 'UTC' } },
      check,
    );
    expect(both).toEqual([{ path: '/schedule', message: expect.stringMatching(/not both/) }]);
  });

  it('names the JSON pointer of missing and wrong fields', () => {
    const issues = checkProfileDocument({ name: 'x', dataSourceList: [], isSingleRunScan: true }, check);
    expect(issues.map((i) => i.path).sort()).toEqual(['/dataSourceList', '/scanTemplateId']);
  });

  it('checks cron expressions (5 fields, valid values) and IANA time zones', () => {
    expect(checkCronExpression('*/15 2 * * MON-FRI')).toBeUndefined();
    expect(checkCronExpression('0 0 2 * * *')).toMatch(/5 fields/);
    expect(checkCronExpression('@daily')).toMatch(/5 fields/);
    expect(checkCronExpression('61 2 * * *')).toMatch(/not a valid cron/);
    expect(checkTimeZone('UTC')).toBeUndefined();
    expect(checkTimeZone('America/New_York')).toBeUndefined();
    expect(checkTimeZone('Mars/Olympus_Mons')).toMatch(/IANA/);
    expect(checkTimeZone('+02:00')).toMatch(/IANA/);
    const issues = checkProfileDocument(
      { ...base, schedule: { cronExpression: '0 25 * * *', timeZone: 'Nowhere/Town' } },
      check,
    );
    expect(issues.map((i) => i.path)).toEqual(['/schedule/cronExpression', '/schedule/timeZone']);
  });

  it('reads a file and refuses a bad one with an InputFileError naming the pointer', async () => {
    const dir = await makeTempDir('profiles-validate-');
    const good = join(dir, 'good.json');
    await writeFile(good, JSON.stringify({ ...base, isSingleRunScan: true }));
    expect(await readProfileFile(good, check)).toMatchObject({ name: 'weekly' });
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ ...base, schedule: { cronExpression: 'nope', timeZone: 'UTC' } }));
    const error = await readProfileFile(bad, check).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputFileError);
    expect((error as InputFileError).exitCode).toBe(2);
    expect((error as Error).message).toContain('/schedule/cronExpression');
    const notJson = join(dir, 'x.json');
    await writeFile(notJson, '{');
    expect(await readProfileFile(notJson, check).catch((e: unknown) => (e as Error).message)).toMatch(
      /not valid JSON/,
    );
  });

  it('parses an id map and refuses a malformed one', () => {
    const map = parseIdMap({ a: { name: 'n', targetId: 'b' }, c: { name: 'm', targetId: null } }, 'm.json');
    expect(map.get('a')).toEqual({ name: 'n', targetId: 'b' });
    expect(map.get('c')).toEqual({ name: 'm', targetId: undefined });
    expect(() => parseIdMap([], 'm.json')).toThrow(InputFileError);
    expect(() => parseIdMap({ a: { targetId: 'b' } }, 'm.json')).toThrow(/\/a: expected/);
  });
});
