/** The diff core beyond the golden scenarios: ignore rules, edge cases, rendering, properties. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isServerManagedField } from '../../src/connections/server-managed.js';
import { compileIgnoreRules, type IgnoreMatcher, parseIgnoreRule } from '../../src/diff/ignore.js';
import { keyCustomFields, SET_LIKE_FIELDS, sortCanonically } from '../../src/diff/normalize.js';
import { formatPointer, parsePointer } from '../../src/diff/pointer.js';
import { renderDiffText, summarize } from '../../src/diff/render-text.js';
import { hasDifferences } from '../../src/diff/types.js';
import { isDeepEqual } from '../../src/diff/values.js';
import { UsageError } from '../../src/errors.js';
import type { Connection } from '../../src/model/connection.js';
import { fixturesDir } from '../../src/paths.js';
import { MASK, maskSecrets } from '../../src/secrets.js';
import { diffConnections } from '../helpers/diff-arrays.js';

const conn = (name: string, fields: Record<string, unknown> = {}): Connection => ({
  name,
  type: 's3',
  ...fields,
});

describe('JSON pointers', () => {
  it('escapes ~ and / and parses them back', () => {
    expect(formatPointer(['a/b', 'c~d', 0])).toBe('/a~1b/c~0d/0');
    expect(parsePointer('/a~1b/c~0d/0')).toEqual(['a/b', 'c~d', '0']);
    expect(parsePointer('a')).toBeUndefined();
    expect(parsePointer('/a~2')).toBeUndefined();
  });
});

describe('ignore rules', () => {
  it.each([
    ['description', true],
    ['/custom_fields', true],
    ['/owners_v2/*/origin', true],
    ['', false],
    ['/', false],
    ['a/b', false],
    ['/bad~2escape', false],
  ])('parses %j: ok=%s', (text, ok) => {
    expect(parseIgnoreRule(text).ok).toBe(ok);
  });

  it('a bad rule makes the diff throw a usage error naming --ignore-field', () => {
    expect(() => diffConnections([], [], { ignoreFields: ['a/b'] })).toThrow(UsageError);
    expect(() => diffConnections([], [], { ignoreFields: ['a/b'] })).toThrow(/--ignore-field/);
  });

  it('removes pointed locations from an entry without touching the original', () => {
    const parsed = ['/owners_v2/*/origin', '/list/1'].map((t) => {
      const p = parseIgnoreRule(t);
      if (!p.ok) throw new Error(p.problem);
      return p.rule;
    });
    const matcher = compileIgnoreRules(parsed);
    const entry = conn('x', {
      owners_v2: [
        { id: 'a', origin: 'manual' },
        { id: 'b', origin: 'ldap' },
      ],
      list: [1, 2, 3],
    });
    const before = structuredClone(entry);
    expect(matcher.removeFromEntry(entry)).toEqual(
      conn('x', { owners_v2: [{ id: 'a' }, { id: 'b' }], list: [1, 3] }),
    );
    expect(entry).toEqual(before);
    expect(matcher.ignoresPath(['owners_v2', 3, 'origin'])).toBe(true);
    expect(matcher.ignoresPath(['owners_v2', 3, 'id'])).toBe(false);
  });

  it('a one-segment pointer is the same as a field name', () => {
    const r = diffConnections([conn('a', { description: 'x' })], [conn('a', { description: 'y' })], {
      ignoreFields: ['/description'],
    });
    expect(hasDifferences(r)).toBe(false);
  });
});

describe('diffConnections edge cases', () => {
  it('does not modify its inputs', () => {
    const from = [
      conn('a', { tags: [{ t: 2 }, { t: 1 }], custom_fields: [{ field_name: 'x', field_value: 1 }] }),
    ];
    const to = [conn('a', { tags: [{ t: 3 }] })];
    const copies = structuredClone([from, to]);
    diffConnections(from, to, { ignoreFields: ['/tags/0'] });
    expect([from, to]).toEqual(copies);
  });

  it('reads own properties only: a field named like an Object.prototype member is compared', () => {
    const from = [JSON.parse('{"name":"a","type":"s3","constructor":"x","__proto__":{"p":1}}') as Connection];
    const to = [conn('a')];
    const result = diffConnections(from, to);
    expect(result.changed[0]?.fields).toEqual([
      { path: '/__proto__', from: { p: 1 } },
      { path: '/constructor', from: 'x' },
    ]);
  });

  it('custom_fields with a repeated field_name fall back to a multiset compare', () => {
    const dup = [
      { field_name: 'k', field_value: '1', field_type: 'clear' },
      { field_name: 'k', field_value: '2', field_type: 'clear' },
    ];
    const same = diffConnections(
      [conn('a', { custom_fields: dup })],
      [conn('a', { custom_fields: [...dup].reverse() })],
    );
    expect(hasDifferences(same)).toBe(false);
    const changed = diffConnections(
      [conn('a', { custom_fields: dup })],
      [conn('a', { custom_fields: [dup[0], { ...dup[1], field_value: '3' }] })],
    );
    expect(changed.changed[0]?.fields.map((f) => f.path)).toEqual(['/custom_fields']);
  });

  it('a flag or a number named like a credential is no secret: is_credential, isCredentialsAuth', () => {
    const result = diffConnections(
      [conn('a', { is_credential: true, isCredentialsAuth: false, token_ttl: 60, password: 'old-one' })],
      [conn('a', { is_credential: false, isCredentialsAuth: true, token_ttl: 90, password: 'new-one' })],
    );
    expect(result.changed[0]?.fields).toEqual([
      { path: '/isCredentialsAuth', from: false, to: true },
      { path: '/is_credential', from: true, to: false },
      { path: '/password', from: MASK, to: MASK },
      { path: '/token_ttl', from: 60, to: 90 },
    ]);
    const declared = diffConnections([conn('a', { pin: 1234 })], [conn('a', { pin: 4321 })], {
      secretFields: () => new Set(['pin']),
    });
    expect(declared.changed[0]?.fields).toEqual([{ path: '/pin', from: MASK, to: MASK }]);
    expect(maskSecrets({ is_credential: true, credentials: { key: 'k-1' }, token_ttl: 60 })).toEqual({
      is_credential: true,
      credentials: { key: MASK },
      token_ttl: 60,
    });
  });

  it('a type change masks the secret fields of both types', () => {
    const secretFields = (type: string) => new Set(type === 'snowflake' ? ['sas_signature'] : []);
    const result = diffConnections(
      [{ name: 'a', type: 'snowflake', sas_signature: 'sig-value-one' }],
      [{ name: 'a', type: 'smb', sas_signature: 'sig-value-two' }],
      { secretFields },
    );
    expect(result.changed[0]?.fields).toEqual([
      { path: '/sas_signature', from: '******', to: '******' },
      { path: '/type', from: 'snowflake', to: 'smb' },
    ]);
  });

  it('a whole object changing into a scalar hides nested credentials', () => {
    const result = diffConnections(
      [conn('a', { auth: { user: 'u', password: 'nested-pass-1' } })],
      [conn('a', { auth: 'none' })],
    );
    expect(JSON.stringify(result)).not.toContain('nested-pass-1');
    expect(result.changed[0]?.fields).toEqual([
      { path: '/auth', from: { user: 'u', password: '******' }, to: 'none' },
    ]);
  });

  it('keeps fields that only look server-managed (exact names, no prefix rule)', () => {
    const result = diffConnections(
      [conn('a', { scan_scope: 'myDrive', test_connection_timeout: 30 })],
      [conn('a', { scan_scope: 'sharedDrive', test_connection_timeout: 31 })],
    );
    expect(result.changed[0]?.fields.map((f) => f.path)).toEqual(['/scan_scope', '/test_connection_timeout']);
  });

  it('drops server-managed fields and keys custom_fields by name', () => {
    const side = (id: string, value: number, tags: unknown[]) =>
      conn('a', {
        _id: id,
        created_at: `t${id}`,
        test_timestamp: `t${id}`,
        connectionStatusDeleteFindings: { id },
        custom_fields: [{ field_name: 'b', field_value: value }],
        tags,
      });
    const result = diffConnections(
      [side('1', 2, [{ t: 2 }, { t: 1 }])],
      [side('2', 3, [{ t: 1 }, { t: 2 }])],
    );
    expect(result.changed[0]?.fields).toEqual([{ path: '/custom_fields/b/field_value', from: 2, to: 3 }]);
  });
});

/** A small reference of what diff compares: no server-managed or ignored field, set-like arrays canonical. */
function normalizeForCompare(entry: Connection, ignore: IgnoreMatcher): Record<string, unknown> {
  const source = ignore.removeFromEntry(entry);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(source)) {
    if (isServerManagedField(key) || ignore.ignoresTopLevel(key)) continue;
    const set = Array.isArray(value) && SET_LIKE_FIELDS.has(key);
    const keyed = set && key === 'custom_fields' ? keyCustomFields(value) : undefined;
    out[key] = keyed ?? (set ? sortCanonically(value) : value);
  }
  return out;
}

describe('a reference normalization agrees with the diff', () => {
  const root = join(fixturesDir(), 'diff');
  it.each(readdirSync(root).filter((d) => /^\d{3}-/.test(d)))('%s', (dir) => {
    const read = (f: string) => JSON.parse(readFileSync(join(root, dir, f), 'utf8')) as Connection[];
    const from = read('from.json');
    const to = read('to.json');
    let ignoreFields: string[] = [];
    try {
      ignoreFields =
        (JSON.parse(readFileSync(join(root, dir, 'options.json'), 'utf8')) as { ignoreFields?: string[] })
          .ignoreFields ?? [];
    } catch {
      // no options.json
    }
    const matcher = compileIgnoreRules(
      ignoreFields.map((t) => {
        const p = parseIgnoreRule(t);
        if (!p.ok) throw new Error(p.problem);
        return p.rule;
      }),
    );
    const result = diffConnections(from, to, { ignoreFields });
    const changed = new Set(result.changed.map((c) => c.name));
    let compared = 0;
    for (const a of from) {
      const b = to.find((c) => c.name === a.name);
      if (!b || JSON.stringify([a, b]).includes(MASK)) continue;
      // Ignore pointers into keyed custom fields act on the compared form only: skip those scenarios' pairs.
      if (ignoreFields.some((f) => f.startsWith('/custom_fields/')) && 'custom_fields' in a) continue;
      compared++;
      const same = isDeepEqual(normalizeForCompare(a, matcher), normalizeForCompare(b, matcher));
      expect(changed.has(a.name)).toBe(!same);
    }
    // Every scenario but the all-masked one has pairs this check really looks at.
    if (dir !== '006-masked-side') expect(compared).toBeGreaterThan(0);
  });
});

describe('properties', () => {
  const value = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null));
  const entry = fc.record({
    name: fc.string({ minLength: 1, maxLength: 6 }),
    type: fc.constantFrom('s3', 'rdb-mysql'),
    password: fc.string({ minLength: 8, maxLength: 20 }).map((s) => `pw:${s}`),
    extra: fc.dictionary(fc.string({ maxLength: 5 }), value, { maxKeys: 4 }),
    tags: fc.array(fc.record({ t: fc.integer({ min: 0, max: 3 }) }), { maxLength: 4 }),
  });

  it('a set compared with itself (shuffled) has no differences', () => {
    fc.assert(
      fc.property(fc.uniqueArray(entry, { selector: (e) => e.name, maxLength: 8 }), (entries) => {
        const shuffled = [...entries]
          .reverse()
          .map((e) => ({ ...e, tags: [...e.tags].reverse(), _id: 'other' }));
        const result = diffConnections(entries, shuffled);
        expect(hasDifferences(result)).toBe(false);
        expect(result.unchanged).toBe(entries.length);
      }),
    );
  });

  it('no password ever appears in the result', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(entry, { selector: (e) => e.name, maxLength: 6 }),
        fc.uniqueArray(entry, { selector: (e) => e.name, maxLength: 6 }),
        (from, to) => {
          const text = JSON.stringify(diffConnections(from, to));
          for (const e of [...from, ...to]) expect(text).not.toContain(e.password);
        },
      ),
    );
  });
});

describe('renderDiffText', () => {
  const result = {
    added: ['b-new'],
    removed: ['a-old'],
    changed: [{ name: 'c', fields: [{ path: '/x', from: 'yes', to: true }] }],
    unchanged: 2,
    uncomparable: [{ name: 'd', path: '/password' }],
  };

  it('prints a plan in name order, then masked fields, then the summary', () => {
    expect(renderDiffText(result, { typeOf: (n) => (n === 'b-new' ? 's3' : undefined) })).toEqual([
      '- a-old',
      '+ b-new (s3)',
      '~ c',
      '    /x: "yes" -> true',
      '? d /password: masked, not compared',
      'connections: 1 added, 1 removed, 1 changed, 2 unchanged; 1 field masked, not compared',
    ]);
  });

  it('lists at most ten masked fields, then says how many more the JSON form holds', () => {
    const many = {
      ...result,
      uncomparable: Array.from({ length: 25 }, (_, i) => ({
        name: `n${String(i).padStart(2, '0')}`,
        path: '/password',
      })),
    };
    const lines = renderDiffText(many);
    const masked = lines.filter((line) => line.startsWith('? '));
    expect(masked).toHaveLength(11);
    expect(masked[9]).toBe('? n09 /password: masked, not compared');
    expect(masked[10]).toBe('? ... and 15 more masked fields, not compared (--format json lists them all)');
    expect(lines.at(-1)).toContain('25 fields masked, not compared');
  });

  it('colours with ANSI codes only when asked', () => {
    expect(renderDiffText(result).join('\n')).not.toContain('\u001b[');
    expect(renderDiffText(result, { color: true })[0]).toBe('\u001b[31m- a-old\u001b[0m');
  });

  it('says "no differences" when only masked fields remain', () => {
    const none = {
      added: [],
      removed: [],
      changed: [],
      unchanged: 3,
      uncomparable: [{ name: 'd', path: '/p' }],
    };
    expect(summarize(none)).toBe('no differences (3 connections unchanged; 1 field masked, not compared)');
    expect(summarize({ ...none, uncomparable: [] })).toBe('no differences (3 connections unchanged)');
  });
});
