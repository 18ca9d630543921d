/**
 * The compact list of a diff's uncomparable fields (src/diff/masked-fields.ts): read as the array of
 * `{name, path}` items it stands for.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareNames } from '../../src/connections/match.js';
import { MaskedFields } from '../../src/diff/masked-fields.js';

// Connections with their masked paths: names unique (a diff lists a connection once), paths from a
// few so that lists repeat.
const connections = fc.uniqueArray(
  fc.record({
    name: fc.string({ maxLength: 4 }),
    paths: fc.array(fc.constantFrom('/password', '/custom_fields/k1/field_value', '/a~1b', ''), {
      maxLength: 3,
    }),
  }),
  { selector: (c) => c.name, maxLength: 12 },
);

function listOf(added: readonly { name: string; paths: string[] }[]): MaskedFields {
  const list = new MaskedFields();
  for (const c of added) list.add(c.name, c.paths);
  return list;
}

const itemsOf = (added: readonly { name: string; paths: string[] }[]) =>
  added.flatMap((c) => c.paths.map((path) => ({ name: c.name, path })));

describe('MaskedFields', () => {
  it('reads back as the items added, in their order, with their count', () => {
    fc.assert(
      fc.property(connections, (added) => {
        const list = listOf(added);
        expect([...list]).toEqual(itemsOf(added));
        expect(list.length).toBe(itemsOf(added).length);
      }),
    );
  });

  it('sorts as a stable sort of its items by name', () => {
    fc.assert(
      fc.property(connections, (added) => {
        const list = listOf(added);
        list.sortByName();
        const expected = itemsOf(added).sort((x, y) => compareNames(x.name, y.name));
        expect([...list]).toEqual(expected);
      }),
    );
  });

  it('is written by JSON.stringify as the array of its items', () => {
    fc.assert(
      fc.property(connections, (added) => {
        expect(JSON.stringify({ uncomparable: listOf(added) }, null, 2)).toBe(
          JSON.stringify({ uncomparable: itemsOf(added) }, null, 2),
        );
      }),
    );
  });

  it('keeps a list of its own: changing the array added afterwards changes nothing', () => {
    const paths = ['/password'];
    const list = new MaskedFields();
    list.add('a', paths);
    list.add('b', ['/password']);
    paths.push('/token');
    list.add('c', []);
    expect([...list]).toEqual([
      { name: 'a', path: '/password' },
      { name: 'b', path: '/password' },
    ]);
    expect(list.length).toBe(2);
  });
});
