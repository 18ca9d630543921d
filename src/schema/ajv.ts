/** The only importer of ajv: JSON Schema 2020-12, all errors, formats. */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Ajv2020, Options as AjvOptions, ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import { isRecord } from '../own-property.js';

/** A schema problem: the offending value's JSON pointer ('' for the root) and a message. */
export interface SchemaIssue {
  readonly path: string;
  readonly message: string;
}

/** A compiled schema that returns issues instead of ajv's error objects. */
export type SchemaCheck = (value: unknown) => readonly SchemaIssue[];

// ajv is loaded when a schema is compiled, not at every command's start.
const requireAjv = createRequire(import.meta.url);

/** A new ajv; `x-secret` and `x-error-text` (a failed `pattern`'s message) are annotations. */
export function createAjv(
  overrides: Readonly<Pick<AjvOptions, 'unicodeRegExp' | 'validateSchema' | 'verbose' | 'code'>> = {},
): Ajv2020 {
  const { Ajv2020 } = requireAjv('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const formats = requireAjv('ajv-formats') as { default?: unknown };
  const addFormats = (formats.default ?? formats) as (ajv: Ajv2020) => Ajv2020;
  const ajv = new Ajv2020({ allErrors: true, strict: false, allowUnionTypes: true, ...overrides });
  addFormats(ajv);
  ajv.addKeyword({ keyword: 'x-secret', schemaType: 'boolean' });
  ajv.addKeyword({ keyword: 'x-error-text', schemaType: 'string' });
  return ajv;
}

/** ajv errors as {@link SchemaIssue}s: a template's `errorText` for a failed pattern, else readable words. */
export function toSchemaIssues(errors: readonly ErrorObject[] | null | undefined): SchemaIssue[] {
  return (errors ?? []).map((e) => {
    if (e.keyword === 'pattern') {
      const text = isRecord(e.parentSchema) ? e.parentSchema['x-error-text'] : undefined;
      return { path: e.instancePath, message: typeof text === 'string' ? text : (e.message ?? 'is invalid') };
    }
    if (e.keyword === 'minLength' && (e.params as { limit?: number }).limit === 1)
      return { path: e.instancePath, message: 'must not be empty' };
    if (e.keyword === 'const') {
      const allowed = (e.params as { allowedValue?: unknown }).allowedValue;
      return { path: e.instancePath, message: `must be ${JSON.stringify(allowed)}` };
    }
    if (e.keyword === 'required') {
      const missing = String((e.params as { missingProperty?: string }).missingProperty ?? '');
      return { path: `${e.instancePath}/${escapePointer(missing)}`, message: 'is required' };
    }
    if (e.keyword === 'additionalProperties') {
      const extra = String((e.params as { additionalProperty?: string }).additionalProperty ?? '');
      return { path: `${e.instancePath}/${escapePointer(extra)}`, message: 'is not an allowed field' };
    }
    if (e.keyword === 'enum') {
      const allowed = (e.params as { allowedValues?: unknown[] }).allowedValues ?? [];
      return {
        path: e.instancePath,
        message: `must be one of ${allowed.map((v) => JSON.stringify(v)).join(', ')}`,
      };
    }
    return { path: e.instancePath, message: e.message ?? 'is invalid' };
  });
}

/** Escape one reference token of a JSON pointer (RFC 6901): `~` as `~0`, `/` as `~1`. */
export function escapePointer(key: string): string {
  if (!key.includes('~') && !key.includes('/')) return key;
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Read a JSON schema file and compile it into a {@link SchemaCheck}. */
export async function compileSchemaFile(path: string, ajv: Ajv2020 = createAjv()): Promise<SchemaCheck> {
  const validate: ValidateFunction = ajv.compile(JSON.parse(await readFile(path, 'utf8')) as object);
  return (value) => (validate(value) ? [] : toSchemaIssues(validate.errors));
}
