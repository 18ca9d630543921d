import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { layOutUncomparable } from '../../src/cli/diff.js';
import { writeJsonDocument } from '../../src/cli/json-document.js';

function written(document: Record<string, unknown>, key: string, items: unknown[]): string {
  let text = '';
  writeJsonDocument({ write: (piece) => (text += piece) }, document, key, items);
  return text;
}

describe('writeJsonDocument', () => {
  it('writes what JSON.stringify(document, null, 2) writes, the array given apart', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 4 }),
        fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 6 }),
        fc.string({ maxLength: 5 }),
        (rest, items, key) => {
          const document = { ...rest, [key]: [] as unknown[] };
          const expected = `${JSON.stringify({ ...document, [key]: items }, null, 2)}\n`;
          expect(written(document, key, items)).toBe(expected);
        },
      ),
    );
  });

  it('writes items of strings, numbers, booleans and null as JSON.stringify does', () => {
    const primitive = fc.oneof(fc.string(), fc.double(), fc.integer(), fc.boolean(), fc.constant(null));
    const item = fc.oneof(
      fc.dictionary(fc.string({ maxLength: 4 }), primitive, { maxKeys: 4 }),
      // Not flat: a nested value, an undefined member, a toJSON of its own or inherited.
      fc.record({ name: fc.string(), nested: fc.array(primitive, { maxLength: 2 }) }),
      fc.record({ name: fc.string(), gone: fc.constant(undefined) }),
      fc.record({ name: fc.string(), toJSON: fc.constant(() => 'replaced') }),
      fc.date({ noInvalidDate: true }),
    );
    fc.assert(
      fc.property(fc.array(item, { maxLength: 6 }), (items) => {
        const expected = `${JSON.stringify({ ok: true, steps: items }, null, 2)}\n`;
        expect(written({ ok: true, steps: [] }, 'steps', items)).toBe(expected);
      }),
    );
  });

  it('leaves out undefined members as JSON.stringify does, and writes in pieces of bounded size', () => {
    const items = Array.from({ length: 3000 }, (_, i) => ({ name: `entry-${i}`, outcome: 'deleted' }));
    const pieces: string[] = [];
    writeJsonDocument(
      { write: (piece) => pieces.push(piece) },
      { ok: true, steps: [], stoppedBy: undefined },
      'steps',
      items,
    );
    expect(pieces.join('')).toBe(`${JSON.stringify({ ok: true, steps: items }, null, 2)}\n`);
    expect(pieces.length).toBeGreaterThan(1);
    expect(Math.max(...pieces.map((p) => p.length))).toBeLessThan(70 * 1024);
  });

  it("lays out diff's uncomparable items as JSON.stringify does", () => {
    const item = fc.record({ name: fc.string({ unit: 'binary' }), path: fc.string({ unit: 'binary' }) });
    fc.assert(
      fc.property(fc.array(item, { maxLength: 6 }), (items) => {
        let text = '';
        const document = { from: 'a', to: 'b', uncomparable: [] };
        writeJsonDocument(
          { write: (piece) => (text += piece) },
          document,
          'uncomparable',
          items,
          layOutUncomparable,
        );
        expect(text).toBe(`${JSON.stringify({ ...document, uncomparable: items }, null, 2)}\n`);
      }),
    );
  });
});
