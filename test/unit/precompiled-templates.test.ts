/**
 * The shipped template schemas as the build compiled them (`scripts/build-template-validators.mjs`,
 * `src/schema/precompiled.ts`): one validator per shipped schema, each answering every entry as a
 * run-time compile of the same schema does (same verdict, same issues, `x-error-text` included), and
 * taken by the catalog of the shipped schemas only: a process that checks entries against them loads no
 * ajv compiler, and one given a copy of them (`--schemas`) compiles.
 */
import { execFile } from 'node:child_process';
import { cp, readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateConnections } from '../../src/emulator/index.js';
import { packageRoot } from '../../src/paths.js';
import { createAjv, toSchemaIssues } from '../../src/schema/ajv.js';
import {
  shippedConnectionSchemaPath,
  shippedTemplatesDir,
  TEMPLATE_SCHEMA_OPTIONS,
} from '../../src/schema/catalog.js';
import { schemaDigest } from '../../src/schema/precompiled.js';
import { assertBuiltCliFresh } from '../helpers/built-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const run = promisify(execFile);
const DIST_SCHEMA = join(packageRoot(), 'dist', 'src', 'schema');

let built: ReadonlyMap<string, ValidateFunction>;
let shipped: { readonly file: string; readonly schema: Record<string, unknown> }[];

beforeAll(async () => {
  assertBuiltCliFresh();
  const { loadPrecompiled } = (await import(
    pathToFileURL(join(DIST_SCHEMA, 'precompiled.js')).href
  )) as typeof import('../../src/schema/precompiled.js');
  built = await loadPrecompiled();
  const files = (await readdir(shippedTemplatesDir()))
    .filter((name) => name.endsWith('.schema.json'))
    .map((name) => join(shippedTemplatesDir(), name));
  files.push(shippedConnectionSchemaPath());
  shipped = await Promise.all(
    files.map(async (file) => ({ file, schema: JSON.parse(await readFile(file, 'utf8')) })),
  );
});

/** Entries of `type` that pass and that fail in many ways: each field missing, of another type, empty. */
function entriesOf(type: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const valid of generateConnections(4, { types: [type], seed: 7 }) as Record<string, unknown>[]) {
    out.push(valid);
    for (const key of Object.keys(valid)) {
      const { [key]: _dropped, ...missing } = valid;
      out.push(missing);
      for (const odd of [12345, '', ' bad value!', {}, [1], true, null]) out.push({ ...valid, [key]: odd });
    }
    out.push({ ...valid, not_a_template_field: 'x' });
  }
  return out;
}

describe('the template validators the build compiled', () => {
  it('hold one validator for each shipped schema, found by its digest', () => {
    expect(built.size).toBe(shipped.length);
    for (const { file, schema } of shipped) expect(built.has(schemaDigest(schema)), file).toBe(true);
  });

  it('answer every entry as a run-time compile of the same schema does', () => {
    const ajv = createAjv({ ...TEMPLATE_SCHEMA_OPTIONS, validateSchema: false });
    let failing = 0;
    for (const { file, schema } of shipped) {
      const compiled = ajv.compile(schema);
      const precompiled = built.get(schemaDigest(schema)) as ValidateFunction;
      // The generic schema is checked with entries of a type that has a template.
      const type = file === shippedConnectionSchemaPath() ? 'rdb-mysql' : basename(file, '.schema.json');
      for (const entry of entriesOf(type)) {
        const verdict = compiled(entry);
        expect(precompiled(entry), `${file}: ${JSON.stringify(entry)}`).toBe(verdict);
        expect(toSchemaIssues(precompiled.errors)).toEqual(toSchemaIssues(compiled.errors));
        if (!verdict) failing += 1;
      }
    }
    // The entries reach the schemas' rules: many fail, with their own issues.
    expect(failing).toBeGreaterThan(100);
  });

  it('are taken by the catalog of the shipped schemas, which then loads no ajv compiler; a copy compiles', async () => {
    const dir = await makeTempDir('dds-precompiled-');
    const copy = join(dir, 'templates');
    await cp(shippedTemplatesDir(), copy, { recursive: true });
    const script = (schemas: string) =>
      [
        `import { createRequire } from 'node:module';`,
        `const { loadShippedCatalog } = await import(${JSON.stringify(pathToFileURL(join(DIST_SCHEMA, 'catalog.js')).href)});`,
        `const catalog = await loadShippedCatalog(${schemas});`,
        `const report = catalog.checkEntry({ name: 'a', type: 'rdb-mysql' });`,
        `const loaded = Object.keys(createRequire(import.meta.url).cache);`,
        `console.log(JSON.stringify({ errors: report.errors.length, compiler: loaded.some((f) => f.includes('/ajv/dist/compile/')) }));`,
      ].join('\n');
    const answer = async (schemas: string) => {
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script(schemas)]);
      return JSON.parse(stdout) as { errors: number; compiler: boolean };
    };
    const fromShipped = await answer('');
    const fromCopy = await answer(JSON.stringify(copy));
    expect(fromShipped.errors).toBeGreaterThan(0);
    expect(fromCopy.errors).toBe(fromShipped.errors);
    expect(fromShipped.compiler).toBe(false);
    expect(fromCopy.compiler).toBe(true);
  });
});
