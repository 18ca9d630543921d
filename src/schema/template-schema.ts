/**
 * Connector template -> JSON Schema 2020-12, for `--templates-from E` (shipped `schemas/templates/` hold only
 * what public recordings show). api-notes: the connection key is `apiName`; values are mixed-typed on
 * purpose, so each kind accepts every spelling exports use (`"yes"`/`true`, `"1"`/`1`), optional fields
 * `null`. `mandatory` -> `required`, non-empty; `validation[].regex` -> `pattern` on non-empty strings (as
 * the service does), `errorText` its message; `password` -> `x-secret`. Whatever is wrong or unknown here is
 * left out with a warning. No `additionalProperties: false`: exports carry fields no template names.
 */
import type { ConnectorTemplate, TemplateField } from '../model/template.js';

const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** Regex every connection name must match (api-notes). */
export const CONNECTION_NAME_PATTERN = '^[\\w\\-\\s\\(\\):]+$';

const CONNECTION_NAME_ERROR_TEXT = 'may contain only letters, digits, spaces and _ - ( ) :';

/** A schema built from a template, and what could not be carried over. */
export interface TemplateSchemaResult {
  readonly schema: Record<string, unknown>;
  readonly warnings: readonly string[];
}

const NUMERIC_STRING = '^-?\\d+(\\.\\d+)?$';

/** The JSON Schema of a connector template, and what was left out. */
export function convertTemplate(template: ConnectorTemplate): TemplateSchemaResult {
  const warnings: string[] = [];
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  const fields: readonly unknown[] = Array.isArray(template.fields) ? template.fields : [];
  if (!Array.isArray(template.fields))
    warnings.push(`template ${template.name}: no fields array; only name and type checked`);
  fields.forEach((raw, index) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      warnings.push(`template ${template.name}: fields[${index}] is not an object; ignored`);
      return;
    }
    const field = raw as TemplateField;
    if (typeof field.apiName !== 'string' || field.apiName === '') {
      warnings.push(`template ${template.name}: fields[${index}] has no apiName; ignored`);
      return;
    }
    if (Object.hasOwn(properties, field.apiName)) {
      warnings.push(`template ${template.name}: field ${field.apiName} appears twice; the first is used`);
      return;
    }
    const warn = (text: string) =>
      warnings.push(`template ${template.name}: field ${field.apiName}: ${text}`);
    properties[field.apiName] = fieldSchema(field, warn);
    if (field.mandatory === true) required.push(field.apiName);
    else if (field.mandatory !== undefined && typeof field.mandatory !== 'boolean') {
      warn(`mandatory is ${JSON.stringify(field.mandatory)}, not a boolean; treated as optional`);
    }
  });
  for (const key of ['type', 'name']) {
    if (!required.includes(key)) required.unshift(key);
  }
  properties.type = { type: 'string', const: template.name };
  const name = properties.name as Record<string, unknown> | undefined;
  if (name === undefined || name.type === undefined) {
    properties.name = {
      ...(name ?? {}),
      type: 'string',
      minLength: 1,
      pattern: CONNECTION_NAME_PATTERN,
      'x-error-text': CONNECTION_NAME_ERROR_TEXT,
    };
  }
  const displayName = typeof template.displayName === 'string' ? template.displayName : template.name;
  const schema: Record<string, unknown> = {
    $schema: JSON_SCHEMA_DIALECT,
    title: displayName,
    description: `A connection of type ${template.name}, from its connector template`,
    type: 'object',
    required: [...new Set(required)],
    properties,
  };
  return { schema, warnings };
}

/** Field kinds this build maps to a JSON type. */
const KNOWN_KINDS = new Set([
  'string',
  'password',
  'boolean',
  'number',
  'enum',
  'stringList',
  'objectList',
  'tags',
]);

/** A string field accepts any scalar: values are mixed-typed on purpose (api-notes). */
const SCALAR_TYPES = ['string', 'number', 'boolean'] as const;

/** The schema of one field; `warn` takes what is left out. */
function fieldSchema(field: TemplateField, warn: (text: string) => void): Record<string, unknown> {
  const optional = field.mandatory !== true;
  const out: Record<string, unknown> = {};
  if (typeof field.displayName === 'string') out.title = field.displayName;
  if (typeof field.description === 'string') out.description = field.description;

  if (field.options !== undefined && !Array.isArray(field.options)) {
    warn('options is not an array; not checked');
  }
  const options = optionValues(field.options);
  const kind = field.type ?? 'string';
  if (typeof kind !== 'string' || !KNOWN_KINDS.has(kind)) {
    warn(`kind ${JSON.stringify(kind)} is not known; any value accepted`);
  } else if (options.length > 0) {
    out.enum = [...looseEnum(options), ...(optional ? [null] : [])];
  } else if (kind === 'boolean') {
    out.enum = [true, false, 'true', 'false', 'yes', 'no', ...(optional ? [null] : [])];
  } else if (kind === 'number') {
    out.type = optional ? ['number', 'string', 'null'] : ['number', 'string'];
    out.pattern = NUMERIC_STRING;
    out['x-error-text'] = 'must be a number';
  } else if (kind === 'stringList') {
    out.type = optional ? ['array', 'null'] : 'array';
    out.items = { type: 'string' };
  } else if (kind === 'objectList') {
    out.type = optional ? ['array', 'null'] : 'array';
    out.items = { type: 'object' };
  } else if (kind === 'tags') {
    out.type = optional ? ['array', 'null'] : 'array';
  } else if (kind === 'string' || kind === 'password') {
    out.type = optional ? [...SCALAR_TYPES, 'null'] : [...SCALAR_TYPES];
    if (!optional) out.minLength = 1;
  } else {
    warn('enum without options; any value accepted');
  }
  if (kind === 'password') out['x-secret'] = true;

  if (field.validation !== undefined && !Array.isArray(field.validation)) {
    warn('validation is not an array; not checked');
  }
  const patterns: Record<string, unknown>[] = [];
  for (const rule of Array.isArray(field.validation) ? field.validation : []) {
    if (typeof rule?.regex !== 'string' || rule.regex === '') continue;
    try {
      new RegExp(rule.regex);
    } catch {
      warn(`regex ${JSON.stringify(rule.regex)} is not valid; not checked`);
      continue;
    }
    patterns.push({
      pattern: `^$|(?:${rule.regex})`,
      'x-error-text':
        typeof rule.errorText === 'string' && rule.errorText !== ''
          ? rule.errorText
          : `must match ${rule.regex}`,
    });
  }
  if (patterns.length === 1) Object.assign(out, patterns[0]);
  else if (patterns.length > 1) out.allOf = patterns;

  if (field.defaultValue !== undefined) out.default = field.defaultValue;
  return out;
}

/** Option values: `{ value, label }` objects (the real shape) or bare values. */
function optionValues(options: readonly unknown[] | undefined): unknown[] {
  if (!Array.isArray(options)) return [];
  const out: unknown[] = [];
  for (const option of options) {
    if (option !== null && typeof option === 'object' && 'value' in option)
      out.push((option as { value: unknown }).value);
    else if (option === null || ['string', 'number', 'boolean'].includes(typeof option)) out.push(option);
  }
  return out;
}

/** The option values plus their other spelling in real exports. */
export function looseEnum(values: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  const add = (v: unknown) => {
    if (!out.some((o) => o === v)) out.push(v);
  };
  for (const v of values) {
    add(v);
    if (typeof v === 'string') {
      if (new RegExp(NUMERIC_STRING).test(v)) add(Number(v));
      if (v === 'yes' || v === 'true') add(true);
      if (v === 'no' || v === 'false') add(false);
    } else if (typeof v === 'number') {
      add(String(v));
    } else if (typeof v === 'boolean') {
      add(String(v));
    }
  }
  return out;
}
