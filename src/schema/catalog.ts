/** Per connection type its schema (compiled on first use), its secret (`x-secret`) and required fields. */
import { readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { InputFileError, type Problem, UsageError } from '../errors.js';
import { readJsonFile } from '../files.js';
import type { Connection } from '../model/connection.js';
import type { ConnectorTemplate } from '../model/template.js';
import { isRecord } from '../own-property.js';
import { schemasDir } from '../paths.js';
import { isMasked } from '../secrets.js';
import { createAjv, escapePointer, toSchemaIssues } from './ajv.js';
import { convertTemplate } from './template-schema.js';

/** A {@link Problem} tagged so callers can re-classify it (import refuses masked secrets). */
export interface ValidationProblem extends Problem {
  readonly kind: 'schema' | 'masked-secret' | 'unknown-type';
  readonly entry: string;
  readonly type: string;
  readonly path: string;
}

export interface EntryReport {
  readonly errors: readonly ValidationProblem[];
  /** Masked secrets and unknown types. */
  readonly warnings: readonly ValidationProblem[];
}

/** Schemas by connection type. */
export interface TemplateCatalog {
  /** Types with a schema, sorted. */
  types(): readonly string[];
  secretFields(type: string): ReadonlySet<string>;
  requiredFields(type: string): readonly string[];
  /** Must be supplied, non-empty and unmasked, at import. */
  requiredSecretFields(type: string): readonly string[];
  checkEntry(entry: Connection): EntryReport;
  /** Compile these types' schemas now (else at first check), e.g. while waiting on the network. */
  compile(types: Iterable<string>): void;
  /** Problems found while building it (e.g. a template regex that does not compile). */
  readonly warnings: readonly string[];
}

interface TypeSchema {
  readonly schema: Record<string, unknown>;
  readonly source: string;
  readonly secrets: ReadonlySet<string>;
  readonly required: readonly string[];
  readonly requiredSecrets: readonly string[];
  validate?: ValidateFunction;
}

export interface CatalogOptions {
  /** The shipped schemas, checked by test/unit/template-schema.test.ts: not again (30 ms a run). */
  readonly schemasChecked?: boolean;
}

/**
 * Template regexes are written for JavaScript without the `u` flag (the service's UI). ajv's optimising
 * pass costs a quarter of each compile and checking 4 000 entries took no longer without it.
 */
const TEMPLATE_SCHEMA_OPTIONS = { unicodeRegExp: false, verbose: true, code: { optimize: false } } as const;
const MASKED_SECRET_MESSAGE = 'must be supplied at import';

function createCatalog(
  schemas: ReadonlyMap<string, SchemaFile>,
  generic: SchemaFile,
  warnings: readonly string[] = [],
  options: CatalogOptions = {},
): TemplateCatalog {
  let ajv: ReturnType<typeof createAjv> | undefined;
  const byType = new Map<string, TypeSchema>();
  for (const [type, { schema, source }] of schemas) byType.set(type, describeSchema(schema, source));
  const genericType = describeSchema(generic.schema, generic.source);
  const noSecrets: ReadonlySet<string> = new Set();

  function compiled(t: TypeSchema): ValidateFunction {
    try {
      ajv ??= createAjv({ ...TEMPLATE_SCHEMA_OPTIONS, validateSchema: options.schemasChecked !== true });
      t.validate ??= ajv.compile(t.schema);
      return t.validate;
    } catch (error) {
      throw new InputFileError(t.source, undefined, `not a valid JSON Schema (${(error as Error).message})`, {
        hint: 'Fix or remove the schema',
        cause: error,
      });
    }
  }

  return {
    types: () => [...byType.keys()].sort(),
    secretFields: (type) => byType.get(type)?.secrets ?? noSecrets,
    requiredFields: (type) => (byType.get(type) ?? genericType).required,
    requiredSecretFields: (type) => byType.get(type)?.requiredSecrets ?? [],
    warnings,
    compile(types) {
      for (const type of types) compiled(byType.get(type) ?? genericType);
    },
    checkEntry(entry) {
      const type = typeof entry.type === 'string' ? entry.type : '';
      const name = typeof entry.name === 'string' ? entry.name : '';
      const known = byType.get(type);
      const target = known ?? genericType;
      const validate = compiled(target);
      const errors: ValidationProblem[] = [];
      const warnings: ValidationProblem[] = [];
      if (!validate(entry)) {
        for (const issue of toSchemaIssues(validate.errors)) {
          errors.push({ kind: 'schema', entry: name, type, path: issue.path, message: issue.message });
        }
      }
      if (known === undefined) {
        warnings.push({
          kind: 'unknown-type',
          entry: name,
          type,
          path: '/type',
          message: `no template schema for type ${JSON.stringify(type)}: checked against connection.schema.json only`,
        });
      }
      for (const path of findMaskedPaths(entry)) {
        warnings.push({ kind: 'masked-secret', entry: name, type, path, message: MASKED_SECRET_MESSAGE });
      }
      return { errors, warnings };
    },
  };
}

function describeSchema(schema: Record<string, unknown>, source: string): TypeSchema {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const secrets = new Set<string>();
  for (const [key, sub] of Object.entries(properties)) {
    if (isRecord(sub) && sub['x-secret'] === true) secrets.add(key);
  }
  const required = Array.isArray(schema.required)
    ? schema.required.filter((k): k is string => typeof k === 'string')
    : [];
  return { schema, source, secrets, required, requiredSecrets: required.filter((k) => secrets.has(k)) };
}

/** JSON pointers of the service's masks: top-level fields and custom fields' values. */
export function findMaskedPaths(entry: Connection): string[] {
  const found: string[] = [];
  for (const key of Object.keys(entry)) {
    const value = entry[key];
    if (isMasked(value)) found.push(`/${escapePointer(key)}`);
    else if (key === 'custom_fields' && Array.isArray(value)) {
      value.forEach((field: unknown, i) => {
        if (isRecord(field) && isMasked(field.field_value)) found.push(`/custom_fields/${i}/field_value`);
      });
    }
  }
  return found;
}

const SCHEMA_SUFFIX = '.schema.json';
const GENERIC_FILE = 'connection.schema.json';

export function shippedTemplatesDir(): string {
  return join(schemasDir(), 'templates');
}

export function shippedConnectionSchemaPath(): string {
  return join(schemasDir(), GENERIC_FILE);
}

async function readSchemaFile(path: string): Promise<Record<string, unknown>> {
  const value = await readJsonFile(path, { what: 'schema', jsonHint: 'Fix or remove the schema' });
  if (!isRecord(value)) {
    throw new InputFileError(path, undefined, 'not a JSON schema (not a JSON object)', {
      hint: 'Fix or remove the schema',
    });
  }
  return value;
}

type SchemaFile = { readonly schema: Record<string, unknown>; readonly source: string };

/** The catalog of a schemas folder: `<type>.schema.json` per type, `connection.schema.json` for others. */
export async function loadShippedCatalog(dir: string = shippedTemplatesDir()): Promise<TemplateCatalog> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    throw new UsageError(`Cannot read the schemas folder ${dir}`, {
      hint: 'Give --schemas a folder holding <type>.schema.json files',
      cause: error,
    });
  }
  const schemas = new Map<string, SchemaFile>();
  for (const file of names.sort()) {
    if (!file.endsWith(SCHEMA_SUFFIX) || file === GENERIC_FILE) continue;
    const path = join(dir, file);
    schemas.set(file.slice(0, -SCHEMA_SUFFIX.length), { schema: await readSchemaFile(path), source: path });
  }
  const genericPath = names.includes(GENERIC_FILE) ? join(dir, GENERIC_FILE) : shippedConnectionSchemaPath();
  const generic = { schema: await readSchemaFile(genericPath), source: genericPath };
  return createCatalog(schemas, generic, [], {
    schemasChecked: resolve(dir) === resolve(shippedTemplatesDir()),
  });
}

/** The catalog of an environment's connector templates; any other type gets the shipped generic schema. */
export async function loadCatalogOfTemplates(
  templates: readonly ConnectorTemplate[],
): Promise<TemplateCatalog> {
  const generic = await readSchemaFile(shippedConnectionSchemaPath());
  const schemas = new Map<string, SchemaFile>();
  const warnings: string[] = [];
  for (const template of templates) {
    const result = convertTemplate(template);
    warnings.push(...result.warnings);
    schemas.set(template.name, { schema: result.schema, source: `template ${template.name}` });
  }
  return createCatalog(schemas, { schema: generic, source: GENERIC_FILE }, warnings);
}
