import { marked } from 'marked';
import { describe, expect, it } from 'vitest';
import { readImportOptions } from '../../src/cli/import.js';
import { overrideSets } from '../../src/importer/overrides.js';
import { ImportSelection } from '../../src/importer/selection.js';
import { code } from '../../src/markdown.js';

describe('import --only and --type', () => {
  it('an item matches the name it spells, and others as a glob', () => {
    const s = new ImportSelection(['finance-*', 'reports [eu]'], undefined);
    expect(s.has('finance-sf', 'snowflake')).toBe(true);
    expect(s.has('reports [eu]', 's3')).toBe(true);
    expect(s.has('reports e', 's3')).toBe(true);
    expect(s.has('hr-sf', 'snowflake')).toBe(false);
    expect(s.has('finance-weekly')).toBe(true);
  });

  it('names keep their spaces: a glob or a name with a trailing space selects only that', () => {
    const s = new ImportSelection(['Sales-DB '], undefined);
    expect(s.has('Sales-DB ', 's3')).toBe(true);
    expect(s.has('Sales-DB', 's3')).toBe(false);
    const glob = new ImportSelection([' ops-*'], undefined);
    expect(glob.has(' ops-a', 's3')).toBe(true);
    expect(glob.has('ops-a', 's3')).toBe(false);
  });

  it('--type narrows connections; with no --only it selects no scan profile', () => {
    const s = new ImportSelection(['finance-*'], new Set(['snowflake']));
    expect(s.has('finance-sf', 'snowflake')).toBe(true);
    expect(s.has('finance-s3', 's3')).toBe(false);
    expect(s.has('finance-weekly')).toBe(true);
    const types = new ImportSelection(undefined, new Set(['s3']));
    expect(types.has('any', 's3')).toBe(true);
    expect(types.has('any', 'snowflake')).toBe(false);
    expect(types.has('a-profile')).toBe(false);
  });

  it('readImportOptions reads --only globs and --type', () => {
    const options = readImportOptions(
      { _: [], snapshot: 's.jsonl', only: 'finance-*', type: 'snowflake, s3' },
      '/tmp',
    );
    expect(options.only?.has('finance-sf', 'snowflake')).toBe(true);
    expect(options.only?.has('finance-sf', 'mongodb')).toBe(false);
    expect(readImportOptions({ _: [], snapshot: 's.jsonl' }, '/tmp').only).toBeUndefined();
  });
});

describe('where a secret an update writes comes from', () => {
  const entry = { name: 'a', type: 'snowflake' };
  const body = {
    password: 'x',
    custom_fields: [
      { field_name: 'pin', field_value: '1' },
      { field_name: 'k', field_value: '2' },
    ],
  };
  it('an override block setting the field, or the custom field of that name', () => {
    const overrides = {
      all: {},
      byType: { snowflake: { password: 'y' } },
      byName: { a: { custom_fields: [{ field_name: 'k', field_value: 'z' }] } },
    };
    expect(overrideSets(entry, body, '/password', overrides)).toBe(true);
    expect(overrideSets(entry, body, '/custom_fields/0/field_value', overrides)).toBe(false);
    expect(overrideSets(entry, body, '/custom_fields/1/field_value', overrides)).toBe(true);
    expect(overrideSets({ name: 'b', type: 's3' }, body, '/password', overrides)).toBe(false);
  });
});

describe('markdown names', () => {
  it('a name with backticks, a bar or spaces stays one code span with its text', () => {
    for (const name of ['a`b', 'x|y', ' padded ', '`start', 'plain']) {
      const md = `| n |\n| --- |\n| ${code(name)} |\n`;
      const table = marked.lexer(md)[0] as { rows: { text: string }[][] };
      const cell = marked.lexer(table.rows[0]?.[0]?.text ?? '');
      const span = (cell[0] as { tokens?: { type: string; text: string }[] }).tokens?.[0];
      expect(span?.type).toBe('codespan');
      expect(span?.text.replace(/\\\|/g, '|')).toBe(name);
    }
  });
});
