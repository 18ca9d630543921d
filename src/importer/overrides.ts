// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:NAME}" is a literal overrides placeholder, not a template
/**
 * Overrides (`--overrides FILE`): values set on connections on their way into the target.
 *
 * `all`, then `byType[type]`, then `byName[name]` are merged over each entry's top-level fields, in that
 * order (a later one wins for the same field; an object value replaces the field whole, it is not
 * merged deeply). A string may hold `${env:NAME}` placeholders: each is replaced by the variable's
 * value, and every value read this way is registered as a secret, so it is scrubbed from all output.
 * An unset variable leaves its placeholder in place; the pre-flight reports it (exit 3). A malformed
 * placeholder (`${env:DB_PW` without its `}`) and values nested deeper than 64 levels are refused when
 * the file is read (exit 2).
 */
import { join } from 'node:path';
import { InputFileError } from '../errors.js';
import { readJsonFile } from '../files.js';
import { schemasDir } from '../paths.js';
import { compileSchemaFile, escapePointer, type SchemaCheck } from '../schema/ajv.js';
import { describeJsonError, registerSecret, registerSecretsOf } from '../secrets.js';

/** Fields and values of one override block. */
export type OverrideFields = Readonly<Record<string, unknown>>;

/** A parsed overrides file. */
export interface Overrides {
  readonly all: OverrideFields;
  readonly byType: Readonly<Record<string, OverrideFields>>;
  readonly byName: Readonly<Record<string, OverrideFields>>;
}

/** No overrides. */
export const EMPTY_OVERRIDES: Overrides = { all: {}, byType: {}, byName: {} };

/** Fields that come from the snapshot and cannot be overridden. */
const FIXED_FIELDS = new Set(['name', 'type', '_id', 'id']);

/** `${env:NAME}`: NAME as a POSIX variable name. */
const PLACEHOLDER = /\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Any `${env:...}` left in a value (also malformed names), for the pre-flight. */
export const UNRESOLVED_PLACEHOLDER = /\$\{env:[^}]*\}/;

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Parse and check an overrides document; `file` names it in errors (exit 2, naming the JSON pointer). */
export async function parseOverrides(text: string, file: string): Promise<Overrides> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputFileError(file, undefined, `is not valid JSON (${describeJsonError(error)})`, {
      hint: OVERRIDES_SHAPE_HINT,
    });
  }
  return checkOverrides(value, file);
}

const OVERRIDES_SHAPE_HINT = "Fix the overrides file; the README's Overrides section shows its shape";

/** Compiled once per process, as the config schema is. */
let overridesCheck: Promise<SchemaCheck> | undefined;

/** Deepest nesting of values an overrides file may hold (a connection's fields are a few levels deep). */
export const MAX_OVERRIDES_DEPTH = 64;

/** A string's text with its well-formed placeholders removed still holds `${env:`: one is malformed. */
const PLACEHOLDER_START = '${env:';

/**
 * Walk the document without recursion (a file nested thousands deep must be one clear line, not a
 * stack overflow): refuse nesting deeper than {@link MAX_OVERRIDES_DEPTH} and any malformed
 * `${env:...}` placeholder (unterminated, or an invalid NAME), which would otherwise be sent as it is,
 * e.g. as a password. The value itself is never quoted: it may be a literal secret.
 */
function checkStructure(value: unknown, file: string): void {
  const stack: [unknown, string, number][] = [[value, '', 0]];
  while (stack.length > 0) {
    const [v, pointer, depth] = stack.pop() as [unknown, string, number];
    if (depth > MAX_OVERRIDES_DEPTH) {
      throw new InputFileError(
        file,
        undefined,
        `nested deeper than ${MAX_OVERRIDES_DEPTH} levels (at ${pointer.split('/').slice(0, 6).join('/')}/...)`,
        { hint: OVERRIDES_SHAPE_HINT },
      );
    }
    if (typeof v === 'string') {
      if (v.replace(PLACEHOLDER, '').includes(PLACEHOLDER_START)) {
        throw new InputFileError(file, undefined, `${pointer || '/'}: malformed \${env:NAME} placeholder`, {
          hint: 'Write it as ${env:NAME}, NAME made of letters, digits and _ (not starting with a digit), closed by }',
        });
      }
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => {
        stack.push([item, `${pointer}/${i}`, depth + 1]);
      });
    } else if (isObject(v)) {
      for (const [k, item] of Object.entries(v))
        stack.push([item, `${pointer}/${escapePointer(k)}`, depth + 1]);
    }
  }
}

/** Check a parsed overrides document (exit 2, naming the JSON pointer). */
export async function checkOverrides(value: unknown, file: string): Promise<Overrides> {
  checkStructure(value, file);
  if (isObject(value)) {
    const blocks: [string, unknown][] = [['/all', value.all]];
    for (const group of ['byType', 'byName'] as const) {
      const g = value[group];
      if (isObject(g))
        for (const [k, v] of Object.entries(g)) blocks.push([`/${group}/${escapePointer(k)}`, v]);
    }
    for (const [pointer, block] of blocks) {
      if (!isObject(block)) continue;
      for (const key of Object.keys(block)) {
        if (FIXED_FIELDS.has(key)) {
          throw new InputFileError(
            file,
            undefined,
            `${pointer}/${escapePointer(key)}: '${key}' cannot be overridden`,
            {
              hint: 'name, type, _id and id come from the snapshot; remove the field from the overrides',
            },
          );
        }
      }
    }
  }
  overridesCheck ??= compileSchemaFile(join(schemasDir(), 'overrides.schema.json'));
  const issues = (await overridesCheck)(value);
  if (issues.length > 0) {
    const list = issues.map((i) => `${i.path || '/'} ${i.message}`).join('; ');
    throw new InputFileError(file, undefined, `not a valid overrides file: ${list}`, {
      hint: 'Expected {"all": {...}, "byType": {"<type>": {...}}, "byName": {"<name>": {...}}}',
    });
  }
  const doc = value as {
    all?: OverrideFields;
    byType?: Record<string, OverrideFields>;
    byName?: Record<string, OverrideFields>;
  };
  return { all: doc.all ?? {}, byType: doc.byType ?? {}, byName: doc.byName ?? {} };
}

/** Read and check an overrides file (exit 2 when it is missing or malformed). */
export async function loadOverrides(path: string, label: string = path): Promise<Overrides> {
  const value = await readJsonFile(path, {
    what: 'overrides file',
    label,
    readHint: 'Check the --overrides path',
    jsonHint: OVERRIDES_SHAPE_HINT,
  });
  return checkOverrides(value, label);
}

/** The result of resolving `${env:..}` placeholders. */
export interface ResolvedOverrides {
  readonly overrides: Overrides;
  /** Variables named by a placeholder but not set (their placeholders are left in place). */
  readonly missing: readonly string[];
}

function resolveValue(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  missing: Set<string>,
): unknown {
  if (typeof value === 'string') {
    return value.replace(PLACEHOLDER, (whole, name: string) => {
      const v = env[name];
      if (v === undefined) {
        missing.add(name);
        return whole;
      }
      registerSecret(v);
      return v;
    });
  }
  if (Array.isArray(value)) return value.map((v) => resolveValue(v, env, missing));
  if (isObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveValue(v, env, missing)]));
  }
  return value;
}

function resolveBlock(
  block: OverrideFields,
  env: Readonly<Record<string, string | undefined>>,
  missing: Set<string>,
) {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(block)) {
    const resolved = resolveValue(value, env, missing);
    // A literal credential written into the overrides file is a secret too, at any depth.
    registerSecretsOf({ [key]: resolved });
    out[key] = resolved;
  }
  return out;
}

/**
 * Replace `${env:NAME}` placeholders with values from `env`, registering each value (and every string
 * set on a credential-looking field) as a secret for {@link scrub}.
 */
export function resolveOverrides(
  overrides: Overrides,
  env: Readonly<Record<string, string | undefined>>,
): ResolvedOverrides {
  const missing = new Set<string>();
  const mapBlocks = (blocks: Readonly<Record<string, OverrideFields>>) =>
    Object.fromEntries(Object.entries(blocks).map(([k, b]) => [k, resolveBlock(b, env, missing)]));
  return {
    overrides: {
      all: resolveBlock(overrides.all, env, missing),
      byType: mapBlocks(overrides.byType),
      byName: mapBlocks(overrides.byName),
    },
    missing: [...missing].sort(),
  };
}

/** Merge `all`, `byType[type]`, `byName[name]` over an entry's top-level fields (later wins). Pure. */
export function applyOverrides<T extends { readonly name: string; readonly type: string }>(
  entry: T,
  overrides: Overrides,
): T {
  return {
    ...entry,
    ...overrides.all,
    ...(overrides.byType[entry.type] ?? {}),
    ...(overrides.byName[entry.name] ?? {}),
  };
}

/** Override keys (`byType` types, `byName` names) that match no entry: most likely typos. */
export function findUnusedOverrides(
  overrides: Overrides,
  entries: readonly { readonly name: string; readonly type: string }[],
): string[] {
  const names = new Set(entries.map((e) => e.name));
  const types = new Set(entries.map((e) => e.type));
  return [
    ...Object.keys(overrides.byType)
      .filter((t) => !types.has(t))
      .map((t) => `byType/${t}`),
    ...Object.keys(overrides.byName)
      .filter((n) => !names.has(n))
      .map((n) => `byName/${n}`),
  ];
}
