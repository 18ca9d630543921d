/**
 * The shipped template schemas compiled ahead, at build time (`scripts/build-validators.mjs` writes
 * `dist/src/schema/shipped-validators.js` with ajv's standalone code): a run that checks entries
 * against them loads eleven ready functions instead of generating and compiling their code (about
 * 50 ms of an import's start, spent before its first POST). The module records a digest of the
 * schemas it was built from; a catalog takes it only when the schemas it reads now have that digest,
 * and compiles at run time otherwise (a module missing, or built from other schemas). Built by the
 * same {@link createAjv} settings the catalog compiles the shipped schemas with.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { packageRoot } from '../paths.js';
import { ajvVersion, createAjv, standaloneCode } from './ajv.js';

/**
 * The ajv settings of template schemas: their regexes are written for JavaScript without the `u` flag
 * (the service's UI), and compiled alike.
 */
export const TEMPLATE_SCHEMA_OPTIONS = { unicodeRegExp: false } as const;

/**
 * The settings of the shipped ones, at run time and ahead alike: not checked against the meta-schema
 * again (a test checks them).
 */
export const SHIPPED_SCHEMA_OPTIONS = { ...TEMPLATE_SCHEMA_OPTIONS, validateSchema: false } as const;

/** The file the build writes, beside this module's compiled form. */
export const SHIPPED_VALIDATORS_FILE = 'shipped-validators.js';

/** What the built module exports. */
export interface ShippedValidators {
  /** {@link schemasDigest} of the schemas it was built from. */
  readonly digest: string;
  /** One function per type. */
  readonly byType: Readonly<Record<string, ValidateFunction>>;
  /** The generic schema's. */
  readonly generic: ValidateFunction;
}

/** A schema with its type (`undefined`: the generic schema). */
export interface NamedSchema {
  readonly type: string | undefined;
  readonly schema: Record<string, unknown>;
}

/**
 * The digest of a set of schemas as parsed (their JSON, so a file's spacing does not matter), with
 * the ajv version and settings they are compiled with: the same schemas compiled otherwise, or by
 * another ajv, are another digest.
 */
export function schemasDigest(schemas: readonly NamedSchema[]): string {
  const hash = createHash('sha256');
  hash.update(`ajv ${ajvVersion()} ${JSON.stringify(SHIPPED_SCHEMA_OPTIONS)}\n`);
  for (const { type, schema } of schemas)
    hash.update(`${JSON.stringify(type ?? null)}\n${JSON.stringify(schema)}\n`);
  return hash.digest('hex');
}

/**
 * The module text of `schemas` compiled ahead: ajv's standalone ESM code (whose `require` of ajv's
 * runtime helpers, written even for ESM, gets a `require` of its own: the helpers are CommonJS),
 * then the digest and the map of functions by type.
 */
export function standaloneModuleOf(schemas: readonly NamedSchema[]): string {
  const ajv = createAjv({ ...SHIPPED_SCHEMA_OPTIONS, code: { source: true, esm: true } });
  const refs: Record<string, string> = {};
  const names = new Map<string | undefined, string>();
  schemas.forEach(({ type, schema }, i) => {
    const key = `s${i}`;
    ajv.addSchema(schema, key);
    refs[`v${i}`] = key;
    names.set(type, `v${i}`);
  });
  const code = standaloneCode(ajv, refs);
  for (const [, specifier] of code.matchAll(/require\("([^"]*)"\)/g)) {
    if (!/^ajv\/dist\/runtime\/[\w-]+$/.test(specifier ?? ''))
      throw new Error(`unexpected require in ajv's standalone code: ${specifier}`);
  }
  const generic = names.get(undefined);
  if (generic === undefined) throw new Error('no generic schema to compile');
  const byType = [...names]
    .filter(([type]) => type !== undefined)
    .map(([type, name]) => `  ${JSON.stringify(type)}: ${name},`);
  return [
    '// Written by scripts/build-validators.mjs (src/schema/precompiled.ts): the shipped template schemas',
    '// compiled ahead by ajv. Do not edit: built again by every `npm run build`.',
    "import { createRequire } from 'node:module';",
    'const require = createRequire(import.meta.url);',
    code,
    `export const digest = ${JSON.stringify(schemasDigest(schemas))};`,
    `export const byType = {\n${byType.join('\n')}\n};`,
    `export const generic = ${generic};`,
    '',
  ].join('\n');
}

/** Write the module of `schemas` compiled ahead (the build's step after `tsc`), beside this module's compiled form. */
export async function writeShippedValidators(
  schemas: readonly NamedSchema[],
  outFile: string = join(fileURLToPath(new URL('.', import.meta.url)), SHIPPED_VALIDATORS_FILE),
): Promise<string> {
  await writeFile(outFile, standaloneModuleOf(schemas));
  return outFile;
}

/**
 * The built module when it was built from `schemas` (same digest), else undefined: none built (a
 * run from the sources without a build), or built from other schemas. Under vitest the sources are
 * TypeScript: the build's copy is looked for.
 */
export async function loadShippedValidators(
  schemas: readonly NamedSchema[],
): Promise<ShippedValidators | undefined> {
  const here = fileURLToPath(import.meta.url);
  const file = here.endsWith('.ts')
    ? join(packageRoot(), 'dist', 'src', 'schema', SHIPPED_VALIDATORS_FILE)
    : join(here, '..', SHIPPED_VALIDATORS_FILE);
  if (!existsSync(file)) return undefined;
  let loaded: ShippedValidators;
  try {
    loaded = (await import(pathToFileURL(file).href)) as ShippedValidators;
  } catch {
    // Unreadable or broken: the schemas are compiled at run time, as without it.
    return undefined;
  }
  return loaded.digest === schemasDigest(schemas) ? loaded : undefined;
}
