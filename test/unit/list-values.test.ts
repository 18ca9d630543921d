import { describe, expect, it } from 'vitest';
import { readImportOptions } from '../../src/cli/import.js';
import { parseListOption } from '../../src/cli/options.js';
import { splitEscapedList, splitListValues } from '../../src/list-values.js';

describe('list values', () => {
  it('a list of names keeps leading and trailing spaces; escaping as for any list', () => {
    expect(splitEscapedList(' Sales-DB ,a\\,b', 'exact')).toEqual([' Sales-DB ', 'a,b']);
    expect(splitListValues(['Sales-DB ', ' x'], 'exact')).toEqual(['Sales-DB ', ' x']);
  });

  it('other lists (types, statuses) are trimmed', () => {
    expect(splitEscapedList('s3, rdb-mysql ')).toEqual(['s3', 'rdb-mysql']);
    expect(parseListOption('s3, rdb-mysql', '--type')).toEqual(['s3', 'rdb-mysql']);
  });

  it('--only keeps a name that ends in a space apart from the one that does not', () => {
    const options = readImportOptions({ _: [], snapshot: 's.jsonl', only: 'Sales-DB ' }, '/tmp');
    expect(options.only?.items).toEqual(['Sales-DB ']);
    expect(options.only?.has('Sales-DB')).toBe(false);
    const both = readImportOptions({ _: [], snapshot: 's.jsonl', only: ['Sales-DB', ' Sales-DB'] }, '/tmp');
    expect(both.only?.items).toEqual(['Sales-DB', ' Sales-DB']);
  });

  it('an empty item of --only is still refused', () => {
    expect(() => readImportOptions({ _: [], snapshot: 's.jsonl', only: 'a,' }, '/tmp')).toThrow(/--only/);
  });
});
