/**
 * The split of a JSON array's elements out of its bytes (src/diff-workflow/array-elements.ts): for any
 * array of objects, written with any spacing and cut into chunks anywhere (inside a string, an escape,
 * a multi-byte character), the texts handed out parse to the array's elements; anything but an array
 * of objects stops it with a reason.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JsonArrayElements } from '../../src/diff-workflow/array-elements.js';

/** Split `bytes` cut at `cuts` (sorted offsets): the texts and whether the array was read whole. */
function split(bytes: Buffer, cuts: readonly number[]): { texts: string[]; whole: boolean; broken?: string } {
  const texts: string[] = [];
  const elements = new JsonArrayElements();
  let at = 0;
  for (const cut of [...cuts, bytes.length]) {
    if (cut < at) continue;
    for (const element of elements.push(bytes.subarray(at, cut))) texts.push(element.toString('utf8'));
    at = cut;
  }
  const whole = elements.end() === undefined;
  return elements.broken === undefined ? { texts, whole } : { texts, whole, broken: elements.broken };
}

/** Strings that stress the split: quotes, backslashes (runs of them), braces, non-ASCII. */
const trickyString = fc
  .array(fc.constantFrom('"', '\\', '\\\\', '{', '}', '[', ']', ',', 'a', 'é', '😀', '\u0001', ' '), {
    maxLength: 12,
  })
  .map((parts) => parts.join(''));

const value = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    trickyString,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(trickyString, tie('value'), { maxKeys: 3 }),
  ),
})).value;

const element = fc.dictionary(trickyString, value, { maxKeys: 5 });

describe('JsonArrayElements', () => {
  it('hands out each element of an array of objects, however it is spaced and cut', () => {
    fc.assert(
      fc.property(
        fc.array(element, { maxLength: 8 }),
        fc.constantFrom(undefined, 1, 2, '\t', ' \r\n ', '\f', '\v'),
        fc.array(fc.nat(), { maxLength: 40 }),
        (elements, indent, rawCuts) => {
          const bytes = Buffer.from(` ${JSON.stringify(elements, null, indent)}\n`);
          const cuts = rawCuts.map((n) => n % (bytes.length + 1)).sort((a, b) => a - b);
          const got = split(bytes, cuts);
          expect(got.broken).toBeUndefined();
          expect(got.whole).toBe(true);
          // A form feed or vertical tab is written only as indentation (JSON.stringify escapes both in
          // strings); JSON.parse takes neither as space, the export's parser both.
          const parse = (text: string) => JSON.parse(text.replace(/[\f\v]/g, ' '));
          expect(got.texts.map(parse)).toEqual(JSON.parse(JSON.stringify(elements)));
        },
      ),
      { numRuns: process.env.CI ? 2_000 : 300 },
    );
  });

  it('splits inside an escape and a run of backslashes byte by byte', () => {
    const elements = [{ a: 'x\\"y\\\\', b: '\\\\\\"' }, { c: '"}]' }, {}];
    const bytes = Buffer.from(JSON.stringify(elements));
    const cuts = Array.from({ length: bytes.length }, (_, i) => i);
    expect(split(bytes, cuts).texts.map((text) => JSON.parse(text))).toEqual(elements);
  });

  it.each([
    ['an object', '{"a":1}', 'not an array'],
    ['a number for an element', '[{"a":1}, 5]', 'element 1 is not an object'],
    ['a string for an element', '["x"]', 'element 0 is not an object'],
    ['more after the array', '[{"a":1}] [', 'more after the array'],
    ['bytes before the array', 'x[{"a":1}]', 'not an array'],
    ['an array not closed', '[{"a":1},', 'the array is not closed'],
    ['an element not closed', '[{"a":"}', 'the array is not closed'],
    ['nothing', '', 'the array is not closed'],
  ])('stops on %s, saying so', (_label, body, why) => {
    const got = split(Buffer.from(body), []);
    expect(got.whole).toBe(false);
    expect(got.broken).toBe(why);
  });

  it('hands out the elements before what stops it, and nothing after', () => {
    const got = split(Buffer.from('[{"a":1},{"b":2}, 7, {"c":3}]'), [5]);
    expect(got.texts).toEqual(['{"a":1}', '{"b":2}']);
    expect(got.broken).toBe('element 2 is not an object');
  });

  it('takes as space what the export parser takes so: a byte order mark, a no-break space, U+2028, a form feed', () => {
    const body = '\ufeff[\u00a0{"a":"\u00a0"},\u2028{"b":2}\u3000\f\v]\u00a0';
    const got = split(Buffer.from(body), [1, 2, 3, 4]);
    expect(got).toEqual({ texts: ['{"a":"\u00a0"}', '{"b":2}'], whole: true });
  });

  it('takes an empty array', () => {
    expect(split(Buffer.from(' [ ] '), [2])).toEqual({ texts: [], whole: true });
  });
});
