/**
 * The shipped template schemas as the build compiled them: ajv's standalone validators, written by
 * `scripts/build-template-validators.mjs` beside this module. A run that checks entries against the
 * shipped schemas loads them instead of ajv's compiler (docs/why.md, "Why the build compiles the
 * shipped template schemas"). Each is keyed by the digest of the schema it was compiled from, so it is
 * used only for that schema; any other is compiled when first used.
 */
import { createHash } from 'node:crypto';
import type { ValidateFunction } from 'ajv/dist/2020.js';

/** The module the build writes beside this one. */
export const PRECOMPILED_FILE = 'precompiled-templates.js';

/** A schema's digest: sha256 of its JSON text. */
export function schemaDigest(schema: unknown): string {
  return createHash('sha256').update(JSON.stringify(schema)).digest('hex');
}

/** The validators the build compiled, by schema digest; none when run from the sources (tests). */
export async function loadPrecompiled(): Promise<ReadonlyMap<string, ValidateFunction>> {
  let module: { readonly validators: Readonly<Record<string, ValidateFunction>> };
  try {
    module = await import(new URL(PRECOMPILED_FILE, import.meta.url).href);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND') return new Map();
    throw error;
  }
  return new Map(Object.entries(module.validators));
}
