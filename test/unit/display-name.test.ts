import { describe, expect, it } from 'vitest';
import { collapseWarnings } from '../../src/cli/warnings.js';
import { renderDiffText } from '../../src/diff/render-text.js';
import { displayName, summaryName } from '../../src/display-name.js';
import { describeStep } from '../../src/sync/kinds/connection/render.js';

describe('names as a reader sees them', () => {
  it('a plain name is printed as it is', () => {
    expect(displayName('finance-s3 (eu):1')).toBe('finance-s3 (eu):1');
  });

  it('control characters are escaped and the name quoted', () => {
    expect(displayName('a\nb')).toBe('"a\\nb"');
    expect(displayName('tab\there\u0007\u009b')).toBe('"tab\\there\\u0007\\u009b"');
    expect(displayName('say "hi"\r')).toBe('"say \\"hi\\"\\r"');
  });

  it('leading and trailing spaces are visible (quoted); an empty name too', () => {
    expect(displayName('Sales-DB ')).toBe('"Sales-DB "');
    expect(displayName(' Sales-DB')).toBe('" Sales-DB"');
    expect(displayName('')).toBe('""');
  });

  it('a long name is cut in summaries, with its length', () => {
    const long = 'x'.repeat(2000);
    expect(summaryName(long)).toBe(`${'x'.repeat(60)}... (2000 characters)`);
    expect(summaryName('short')).toBe('short');
  });

  it('diff lines, plan lines and collapsed warnings use it', () => {
    const lines = renderDiffText({
      added: ['a\nb'],
      removed: ['Sales-DB '],
      changed: [],
      unchanged: 0,
      uncomparable: [],
    });
    expect(lines.slice(0, 2)).toEqual(['- "Sales-DB "', '+ "a\\nb"']);
    expect(lines.join('\n').split('\n')).toHaveLength(lines.length);
    expect(describeStep({ kind: 'exists', name: 'Sales-DB ', type: 's3' } as never)).toContain('"Sales-DB "');
    const long = 'n'.repeat(2000);
    const collapsed = collapseWarnings(
      Array.from({ length: 5 }, (_, i) => ({ group: 'no template', where: `${long}${i}`, text: 'x' })),
      { verbose: false },
    );
    expect(collapsed).toHaveLength(1);
    expect(collapsed[0]?.length).toBeLessThan(500);
    expect(collapsed[0]).toContain('(2001 characters)');
  });
});

describe('diff text of scan profiles', () => {
  it('a dataSourceList change is shown as connection names added and removed', () => {
    const lines = renderDiffText({
      added: [],
      removed: [],
      changed: [],
      unchanged: 2,
      uncomparable: [],
      scanProfiles: {
        added: [],
        removed: [],
        changed: [
          { name: 'nightly', fields: [{ path: '/dataSourceList', from: ['a', 'b'], to: ['b', 'c '] }] },
        ],
      },
    });
    expect(lines).toEqual([
      '~ scan profile nightly',
      '    /dataSourceList: connections + "c ", - a',
      'connections: 0 added, 0 removed, 0 changed, 2 unchanged; scan profiles: 0 added, 0 removed, 1 changed',
    ]);
  });
});

describe('counts', () => {
  it('a count has its noun in the right number', async () => {
    const { countOf } = await import('../../src/display-name.js');
    expect(countOf(1, 'scan profile')).toBe('1 scan profile');
    expect(countOf(2, 'scan profile')).toBe('2 scan profiles');
    expect(countOf(1, 'entry', 'entries')).toBe('1 entry');
    expect(countOf(0, 'entry', 'entries')).toBe('0 entries');
  });
});
