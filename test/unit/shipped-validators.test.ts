/**
 * The shipped template schemas compiled ahead by the build (src/schema/precompiled.ts, written to
 * dist/ by `npm run build`, which `npm test` runs first): taken by the catalog for the shipped
 * schemas, the same verdicts as compiling them at run time, and not taken for schemas that changed.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateConnections } from '../../src/emulator/generate.js';
import { createAjv } from '../../src/schema/ajv.js';
import {
  loadShippedCatalog,
  namedSchemas,
  readSchemasFolder,
  shippedTemplatesDir,
} from '../../src/schema/catalog.js';
import {
  loadShippedValidators,
  type NamedSchema,
  SHIPPED_SCHEMA_OPTIONS,
  type ShippedValidators,
  standaloneModuleOf,
} from '../../src/schema/precompiled.js';

let schemas: NamedSchema[];
let ahead: ShippedValidators;

beforeAll(async () => {
  const read = await readSchemasFolder(shippedTemplatesDir());
  schemas = namedSchemas(read.schemas, read.generic);
  const loaded = await loadShippedValidators(schemas);
  if (loaded === undefined)
    throw new Error('dist/src/schema/shipped-validators.js is missing or stale: run npm run build');
  ahead = loaded;
});

describe('the shipped schemas compiled ahead', () => {
  it('are what the catalog of the shipped schemas checks with', async () => {
    expect((await loadShippedCatalog(undefined, { forChecks: true })).precompiled).toBe(true);
    // A caller that reads only secret and required fields loads none.
    expect((await loadShippedCatalog()).precompiled).toBe(false);
  });

  it('hold one function per shipped type, and the generic one', () => {
    expect(Object.keys(ahead.byType).sort()).toEqual(
      schemas.flatMap((s) => (s.type === undefined ? [] : [s.type])).sort(),
    );
    expect(typeof ahead.generic).toBe('function');
  });

  it('give the verdicts and errors of the same schemas compiled at run time', () => {
    const ajv = createAjv(SHIPPED_SCHEMA_OPTIONS);
    const runTime = new Map(schemas.map((s) => [s.type, ajv.compile(s.schema)]));
    // Generated connections of every type, then fields replaced by values of any JSON type or dropped.
    const base = generateConnections(200, { seed: 7 }) as Record<string, unknown>[];
    const json = fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }),
      fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 }), { maxKeys: 2 }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...base),
        fc.array(fc.tuple(fc.string({ maxLength: 12 }), fc.option(json)), { maxLength: 4 }),
        fc.boolean(),
        (connection, edits, generic) => {
          const entry: Record<string, unknown> = { ...connection };
          const keys = Object.keys(entry);
          edits.forEach(([key, value], i) => {
            // Half the edits hit a field the entry has.
            const target = i % 2 === 0 && keys.length > 0 ? (keys[key.length % keys.length] as string) : key;
            if (value === null) delete entry[target];
            else entry[target] = value;
          });
          const type = generic || typeof entry.type !== 'string' ? undefined : entry.type;
          const precompiled =
            type !== undefined && Object.hasOwn(ahead.byType, type) ? ahead.byType[type] : ahead.generic;
          const compiled = runTime.get(type !== undefined && runTime.has(type) ? type : undefined);
          if (precompiled === undefined || compiled === undefined) throw new Error('no validator');
          expect(precompiled(entry)).toBe(compiled(entry));
          expect(precompiled.errors ?? null).toEqual(compiled.errors ?? null);
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('are not taken for schemas that changed since the build', async () => {
    const [first, ...rest] = schemas;
    if (first === undefined) throw new Error('no shipped schema');
    const edited = {
      ...first,
      schema: { ...first.schema, required: ['name', 'type', 'added_since_the_build'] },
    };
    expect(await loadShippedValidators([edited, ...rest])).toBeUndefined();
    expect(await loadShippedValidators(rest)).toBeUndefined();
  });

  it('the module written requires nothing but ajv runtime helpers', () => {
    const text = standaloneModuleOf(schemas);
    for (const [, specifier] of text.matchAll(/require\("([^"]*)"\)/g))
      expect(specifier).toMatch(/^ajv\/dist\/runtime\//);
    expect(text).toMatch(/^export const digest = "[0-9a-f]{64}";$/m);
  });
});
