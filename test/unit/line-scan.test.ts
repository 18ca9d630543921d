/**
 * The scan of a snapshot line (src/snapshot/line-scan.ts) held to `JSON.parse` of the line's UTF-8
 * text, as the reader parses it: a line the scan accepts is one `JSON.parse` reads as a plain object,
 * and everything the scan says of it (name, type, mask count, masks at places) is what the parsed
 * object holds. Lines are written with repeated keys, whitespace, escapes, and then damaged byte by
 * byte (control characters, stray quotes and backslashes, invalid UTF-8, cut numbers and literals).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maskTokensIn } from '../../src/diff/merged.js';
import { customFieldAsCompared } from '../../src/diff/normalize.js';
import { MASK } from '../../src/secrets.js';
import { EntryLineScan } from '../../src/snapshot/line-scan.js';

const KEYS = [
  'name',
  'type',
  'custom_fields',
  'password',
  'field_name',
  'field_value',
  'a',
  '__proto__',
  'é',
  MASK,
];

const key = fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 4 }));
const leaf = fc.oneof(
  fc.constant(MASK),
  fc.string({ maxLength: 6 }),
  fc.constantFrom('a"b', 'back\\slash', 'tab\there', '\u0001', 'é', '\u2028', '*****', '*******'),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);
const { value } = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.array(tie('value'), { maxLength: 3 }),
    fc.array(fc.tuple(key, tie('value')), { maxLength: 3 }).map((members) => new Members(members)),
  ),
}));
const customField = fc
  .array(
    fc.tuple(
      fc.constantFrom('field_name', 'field_type', 'field_value', 'x'),
      fc.oneof(fc.constantFrom('k1', 'k2', 'encrypted', MASK, 'é'), leaf),
    ),
    { maxLength: 4 },
  )
  .map((members) => new Members(members));

/** An object written member by member: keys may repeat, as a hand-written line may repeat them. */
class Members {
  constructor(readonly members: readonly (readonly [string, unknown])[]) {}
}

/** JSON text of `v` with `gap` between tokens (JSON whitespace only). */
function write(v: unknown, gap: () => string): string {
  if (v instanceof Members) {
    const inner = v.members.map(
      ([k, x]) => `${gap()}${JSON.stringify(k)}${gap()}:${gap()}${write(x, gap)}${gap()}`,
    );
    return `{${inner.join(',')}${inner.length === 0 ? gap() : ''}}`;
  }
  if (Array.isArray(v)) {
    const inner = v.map((x) => `${gap()}${write(x, gap)}${gap()}`);
    return `[${inner.join(',')}${inner.length === 0 ? gap() : ''}]`;
  }
  return JSON.stringify(v);
}

const entryMembers = fc
  .record({
    name: fc.oneof(fc.string({ maxLength: 5 }), fc.constantFrom('n\\"x', 'é', ''), value),
    type: fc.oneof(fc.constantFrom('s3', 'rdb-mysql', 'gcp-big-query'), value),
    custom: fc.oneof(fc.array(customField, { maxLength: 4 }), value, fc.constant(undefined)),
    rest: fc.array(fc.tuple(key, value), { maxLength: 5 }),
    repeat: fc.array(fc.tuple(fc.constantFrom('name', 'type', 'custom_fields', 'password'), value), {
      maxLength: 2,
    }),
    order: fc.integer({ min: 0, max: 1000 }),
  })
  .map(({ name, type, custom, rest, repeat, order }) => {
    const members: [string, unknown][] = [['name', name], ['type', type], ...rest, ...repeat];
    if (custom !== undefined) members.splice(order % (members.length + 1), 0, ['custom_fields', custom]);
    return new Members(members);
  });

const spacing = fc.oneof(
  fc.constant(() => ''),
  fc.integer({ min: 1, max: 1 << 30 }).map((seed) => {
    let state = seed;
    return () => {
      state = (state * 1103515245 + 12345) & 0x7fffffff;
      return ['', '', '', ' ', '\t', '\r', '  '][state % 7] as string;
    };
  }),
);

const EDIT_BYTES = [
  0x00, 0x09, 0x0a, 0x0d, 0x1f, 0x20, 0x22, 0x5c, 0x75, 0x30, 0x2d, 0x2e, 0x65, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c,
  0x3a, 0x7f, 0x80, 0xc3, 0xa9, 0xff, 0x74, 0x6e, 0x2a, 0x2f, 0x41,
];
const edits = fc.array(
  fc.record({
    at: fc.nat(),
    kind: fc.constantFrom('insert', 'delete', 'replace'),
    byte: fc.constantFrom(...EDIT_BYTES),
  }),
  { maxLength: 3 },
);

function damage(text: Buffer, list: readonly { at: number; kind: string; byte: number }[]): Buffer {
  let bytes = [...text];
  for (const { at, kind, byte } of list) {
    const i = bytes.length === 0 ? 0 : at % (bytes.length + (kind === 'insert' ? 1 : 0));
    if (kind === 'insert') bytes = [...bytes.slice(0, i), byte, ...bytes.slice(i)];
    else if (kind === 'delete') bytes.splice(i, 1);
    else if (i < bytes.length) bytes[i] = byte;
  }
  return Buffer.from(bytes);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** Values that are the mask, at any depth. */
function countMasks(v: unknown): number {
  if (v === MASK) return 1;
  if (Array.isArray(v)) return v.reduce<number>((n, x) => n + countMasks(x), 0);
  if (isPlainObject(v)) return Object.keys(v).reduce((n, k) => n + countMasks(v[k]), 0);
  return 0;
}

/** Everything the scan says of `line` agrees with `JSON.parse` of it; returns whether it was accepted. */
function checkAgainstParse(scan: EntryLineScan, line: Buffer): boolean {
  const accepted = scan.scan(line);
  let parsed: unknown;
  let parses = true;
  try {
    parsed = JSON.parse(line.toString('utf8'));
  } catch {
    parses = false;
  }
  if (!accepted) return false;
  expect(parses).toBe(true);
  expect(isPlainObject(parsed)).toBe(true);
  const entry = parsed as Record<string, unknown>;
  const own = (k: string) => (Object.hasOwn(entry, k) ? entry[k] : undefined);
  expect(scan.name()).toBe(typeof own('name') === 'string' ? own('name') : undefined);
  expect(scan.type()).toBe(typeof own('type') === 'string' ? own('type') : undefined);
  // A bound on the masks, as maskTokensIn's (a repeated key's earlier value counts), never above it.
  const masks = scan.masks();
  const tokens = maskTokensIn(line);
  if (tokens !== undefined) {
    expect(masks).toBeDefined();
    expect(masks).toBeLessThanOrEqual(tokens);
  }
  if (masks !== undefined) expect(masks).toBeGreaterThanOrEqual(countMasks(entry));
  for (const k of KEYS) {
    const answer = scan.maskAt(k);
    if (answer !== 'unknown') expect(answer).toBe(own(k) === MASK ? 'mask' : 'no');
    else expect(/^[\x00-\x7f]*$/.test(k)).toBe(false);
    for (const field of ['k1', 'k2', 'é']) {
      const found = scan.customMaskAt(field, k);
      if (found === 'unknown') continue;
      const compared = customFieldAsCompared(own('custom_fields'), field);
      const held = isPlainObject(compared) && Object.hasOwn(compared, k) && compared[k] === MASK;
      expect(found).toBe(held ? 'mask' : 'no');
    }
  }
  return true;
}

describe('EntryLineScan', () => {
  it('accepts a line only when JSON.parse reads it as a plain object, and says of it what the parsed object holds', () => {
    const scan = new EntryLineScan();
    fc.assert(
      fc.property(entryMembers, spacing, edits, (members, gap, list) => {
        const text = Buffer.from(write(members, gap));
        // Written whole, the line is accepted (its keys have no escapes: JSON.stringify of these keys writes none
        // but for a quote or backslash, which the key generator may give).
        const accepted = checkAgainstParse(scan, text);
        const keysEscaped = members.members.some(([k]) => JSON.stringify(k).includes('\\'));
        if (!keysEscaped && !text.includes('\\u')) expect(accepted).toBe(true);
        checkAgainstParse(scan, damage(text, list));
      }),
      { numRuns: 3000 },
    );
  });

  it('declines what JSON.parse refuses, byte by byte', () => {
    const scan = new EntryLineScan();
    const refused = [
      '',
      ' ',
      '[]',
      '"a"',
      '1',
      '{',
      '{"a":1,}',
      '{"a":1 "b":2}',
      '{"a" 1}',
      '{"a":01}',
      '{"a":1.}',
      '{"a":.5}',
      '{"a":-}',
      '{"a":1e}',
      '{"a":+1}',
      '{"a":tru}',
      '{"a":nul}',
      '{"a":"x\u0001"}',
      '{"a":"\\x"}',
      '{"a":"\\u12G4"}',
      '{"a":"unterminated}',
      '{"a":[1,]}',
      '{"a":{"b":1,}}',
      '{"a":1}}',
      '{"a":1} x',
      '\ufeff{"a":1}',
      '{"a":NaN}',
      `{"a":${'['.repeat(100)}${']'.repeat(100)}}`,
    ];
    for (const text of refused) {
      const line = Buffer.from(text);
      expect(scan.scan(line), text).toBe(false);
    }
    // Deep nesting is declined (parsed instead), though JSON.parse reads it.
    const deep = `{"a":${'['.repeat(100)}${']'.repeat(100)}}`;
    expect(() => JSON.parse(deep)).not.toThrow();
  });

  it('reads the line JSON.stringify writes of a connection, with its masks where they are', () => {
    const scan = new EntryLineScan();
    const entry = {
      _id: '1',
      name: 'gen-\u00e9-"quoted"',
      type: 'rdb-mysql',
      password: MASK,
      custom_fields: [
        { field_name: 'k1', field_type: 'encrypted', field_value: MASK },
        { field_name: 'k2', field_type: 'clear', field_value: 'v' },
      ],
      tags: [{ tagName: 'x', tagValue: MASK }],
      enabled: 'yes',
      n: -1.5e3,
      ok: true,
      none: null,
    };
    const line = Buffer.from(JSON.stringify(entry));
    expect(scan.scan(line)).toBe(true);
    expect(scan.name()).toBe(entry.name);
    expect(scan.type()).toBe('rdb-mysql');
    expect(scan.masks()).toBe(3);
    expect(scan.maskAt('password')).toBe('mask');
    expect(scan.maskAt('enabled')).toBe('no');
    expect(scan.maskAt('absent')).toBe('no');
    expect(scan.customMaskAt('k1', 'field_value')).toBe('mask');
    expect(scan.customMaskAt('k2', 'field_value')).toBe('no');
    expect(scan.customMaskAt('k3', 'field_value')).toBe('no');
    // The type's text is used again for the next line of that type.
    expect(scan.scan(Buffer.from(JSON.stringify({ ...entry, name: 'b' })))).toBe(true);
    expect(scan.type()).toBe('rdb-mysql');
    expect(scan.name()).toBe('b');
  });
});
