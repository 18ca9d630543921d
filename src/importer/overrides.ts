// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:NAME}" is a literal overrides placeholder, not a template
/** Overrides (`--overrides FILE`; docs/files.md, "Overrides"). */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { customFieldName } from '../connections/images.js';
import { parsePointer } from '../diff/pointer.js';
import { isDeepEqual } from '../diff/values.js';
import { InputFileError } from '../errors.js';
import { readJsonFile } from '../files.js';
import { isRecord } from '../own-property.js';
import { schemasDir } from '../paths.js';
import { compileSchemaFile, escapePointer, type SchemaCheck } from '../schema/ajv.js';
import { registerSecret, registerSecretsOf } from '../secrets.js';

/** Fields and values of one override block. */
export type OverrideFields = Readonly<Record<string, unknown>>;

/** A parsed overrides file. */
export interface Overrides {
  readonly all: OverrideFields;
  readonly byType: Readonly<Record<string, OverrideFields>>;
  readonly byName: Readonly<Record<string, OverrideFields>>;
  /** What `${file:PATH}` is relative to (the overrides file's folder); default: the cwd. */
  readonly baseDir?: string;
}

export const EMPTY_OVERRIDES: Overrides = { all: {}, byType: {}, byName: {} };

const FIXED_FIELDS = new Set(['name', 'type', '_id', 'id']);

/** `${env:NAME}` (NAME as a POSIX variable name) or `${file:PATH}` (PATH not empty, no `}`). */
const PLACEHOLDER = /\$\{(?:env:([A-Za-z_][A-Za-z0-9_]*)|file:([^}]+))\}/g;

/** Any `${env:...}` or `${file:...}` left in a value (also malformed names), for the pre-flight. */
export const UNRESOLVED_PLACEHOLDER = /\$\{(?:env|file):[^}]*\}/;

/** What an unresolved placeholder needs (`set the environment variable X`). */
export function describeUnresolved(placeholder: string): string {
  const file = /^\$\{file:([^}]*)\}$/.exec(placeholder);
  if (file) return `make the file ${file[1]} readable (a \${file:PATH} placeholder)`;
  const variable = /\$\{env:([^}]*)\}/.exec(placeholder)?.[1] ?? '';
  return `set the environment variable ${variable}`;
}

const OVERRIDES_SHAPE_HINT = 'Fix the overrides file; docs/files.md (Overrides) shows its shape';

let overridesCheck: Promise<SchemaCheck> | undefined;

/** Deepest nesting of values an overrides file may hold (a connection's fields are a few levels deep). */
export const MAX_OVERRIDES_DEPTH = 64;

/** The start a malformed placeholder leaves, once the well-formed ones are removed; its form; the hint. */
const MALFORMED_PLACEHOLDERS = [
  [
    '${env:',
    '${env:NAME}',
    'Write it as ${env:NAME}, NAME made of letters, digits and _ (not starting with a digit), closed by }',
  ],
  ['${file:', '${file:PATH}', 'Write it as ${file:PATH}, PATH relative to the overrides file, closed by }'],
] as const;

/**
 * Refuse deep nesting (one clear line, not a stack overflow) and a malformed placeholder (else sent as it
 * is, e.g. as a password). The value is never quoted: it may be a literal secret.
 */
function checkStructure(value: unknown, file: string, pointer = '', depth = 0): void {
  if (depth > MAX_OVERRIDES_DEPTH) {
    throw new InputFileError(
      file,
      undefined,
      `nested deeper than ${MAX_OVERRIDES_DEPTH} levels (at ${pointer.split('/').slice(0, 6).join('/')}/...)`,
      { hint: OVERRIDES_SHAPE_HINT },
    );
  }
  if (typeof value === 'string') {
    const rest = value.replace(PLACEHOLDER, '');
    const malformed = MALFORMED_PLACEHOLDERS.find(([start]) => rest.includes(start));
    if (malformed !== undefined) {
      throw new InputFileError(file, undefined, `${pointer || '/'}: malformed ${malformed[1]} placeholder`, {
        hint: malformed[2],
      });
    }
  } else if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) checkStructure(item, file, `${pointer}/${i}`, depth + 1);
  } else if (isRecord(value)) {
    for (const [k, item] of Object.entries(value))
      checkStructure(item, file, `${pointer}/${escapePointer(k)}`, depth + 1);
  }
}

/** Check a parsed overrides document (exit 2, naming the JSON pointer). */
export async function checkOverrides(value: unknown, file: string): Promise<Overrides> {
  checkStructure(value, file);
  const doc = isRecord(value) ? value : {};
  const blocks: [string, unknown][] = [['/all', doc.all]];
  for (const group of ['byType', 'byName'] as const) {
    for (const [k, v] of Object.entries(isRecord(doc[group]) ? doc[group] : {}))
      blocks.push([`/${group}/${escapePointer(k)}`, v]);
  }
  for (const [pointer, block] of blocks) {
    const fixed = isRecord(block) ? Object.keys(block).find((key) => FIXED_FIELDS.has(key)) : undefined;
    if (fixed === undefined) continue;
    throw new InputFileError(
      file,
      undefined,
      `${pointer}/${escapePointer(fixed)}: '${fixed}' cannot be overridden`,
      {
        hint: 'name, type, _id and id come from the snapshot; remove the field from the overrides',
      },
    );
  }
  overridesCheck ??= compileSchemaFile(join(schemasDir(), 'overrides.schema.json'));
  const issues = (await overridesCheck)(value);
  if (issues.length > 0) {
    const list = issues.map((i) => `${i.path || '/'} ${i.message}`).join('; ');
    throw new InputFileError(file, undefined, `not a valid overrides file: ${list}`, {
      hint: 'Expected {"all": {...}, "byType": {"<type>": {...}}, "byName": {"<name>": {...}}}',
    });
  }
  const checked = value as Partial<Omit<Overrides, 'baseDir'>>;
  return { all: checked.all ?? {}, byType: checked.byType ?? {}, byName: checked.byName ?? {} };
}

/** Read and check an overrides file (exit 2 when it is missing or malformed). */
export async function loadOverrides(path: string, label: string = path): Promise<Overrides> {
  const value = await readJsonFile(path, {
    what: 'overrides file',
    label,
    readHint: 'Check the --overrides path',
    jsonHint: OVERRIDES_SHAPE_HINT,
  });
  return { ...(await checkOverrides(value, label)), baseDir: dirname(resolve(path)) };
}

/** A file's content, trimmed (a mounted secret often ends with a newline); undefined when unreadable. */
function readTrimmed(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return undefined; // the pre-flight names the placeholder left
  }
}

/** Replace the placeholders by their values, each registered as a secret; one without a value stays. */
export function resolveOverrides(
  overrides: Overrides,
  env: Readonly<Record<string, string | undefined>>,
): Overrides {
  const baseDir = overrides.baseDir ?? process.cwd();
  const files = new Map<string, string | undefined>();
  const readFile = (path: string) => {
    const full = resolve(baseDir, path);
    if (!files.has(full)) files.set(full, readTrimmed(full));
    return files.get(full);
  };
  const resolveValue = (value: unknown): unknown => {
    if (typeof value === 'string') {
      return value.replace(PLACEHOLDER, (whole, name: string | undefined, path: string | undefined) => {
        const v = name !== undefined ? env[name] : readFile(path ?? '');
        if (v === undefined) return whole;
        registerSecret(v);
        return v;
      });
    }
    if (Array.isArray(value)) return value.map(resolveValue);
    if (isRecord(value))
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolveValue(v)]));
    return value;
  };
  const resolveBlock = (block: OverrideFields) => {
    const out = resolveValue(block) as Record<string, unknown>;
    // A literal credential written into the overrides file is a secret too, at any depth.
    registerSecretsOf(out);
    return out;
  };
  const mapBlocks = (blocks: Readonly<Record<string, OverrideFields>>) =>
    Object.fromEntries(Object.entries(blocks).map(([k, b]) => [k, resolveBlock(b)]));
  return {
    all: resolveBlock(overrides.all),
    byType: mapBlocks(overrides.byType),
    byName: mapBlocks(overrides.byName),
    ...(overrides.baseDir === undefined ? {} : { baseDir: overrides.baseDir }),
  };
}

/** The override blocks that apply to `entry`: all, its type's, its name's (later wins). */
export function blocksFor(entry: { readonly name: string; readonly type: string }, overrides: Overrides) {
  return [overrides.all, overrides.byType[entry.type] ?? {}, overrides.byName[entry.name] ?? {}];
}

/** Whether any override block (all, its type's, its name's) sets a field of `entry`. */
export function overridesApplyTo(
  entry: { readonly name: string; readonly type: string },
  overrides: Overrides,
): boolean {
  return blocksFor(entry, overrides).some((block) => Object.keys(block).length > 0);
}

/** Merge by `field_name` (all named): overriding the encrypted custom field must not drop the clear ones. */
function isNamedList(value: unknown): value is unknown[] {
  return Array.isArray(value) && value.every((element) => customFieldName(element) !== undefined);
}

/** `custom_fields` with an override's named elements merged in (each in its place, new ones appended). */
function mergeCustomFields(current: unknown, override: unknown): unknown {
  if (!Array.isArray(current) || !isNamedList(override)) return override;
  const byName = new Map(override.map((element) => [customFieldName(element), element]));
  const merged = current.map((element) => {
    const name = customFieldName(element);
    if (name === undefined || !byName.has(name)) return element;
    const replacement = byName.get(name);
    byName.delete(name);
    return replacement;
  });
  return [...merged, ...byName.values()];
}

/** Whether the value at `pointer` of an entry's prepared body was set by an override. */
export function overrideSets(
  entry: { readonly name: string; readonly type: string },
  body: Readonly<Record<string, unknown>>,
  pointer: string,
  overrides: Overrides,
): boolean {
  const [key = '', index] = parsePointer(pointer) ?? [];
  return blocksFor(entry, overrides).some((block) => {
    if (!Object.hasOwn(block, key)) return false;
    const value = block[key];
    if (key !== 'custom_fields' || !isNamedList(value)) return true;
    const list = body.custom_fields;
    const name = Array.isArray(list) ? customFieldName(list[Number(index)]) : undefined;
    return name !== undefined && value.some((element) => customFieldName(element) === name);
  });
}

/** Merge `all`, `byType[type]`, `byName[name]` over an entry's top-level fields (later wins). */
export function applyOverrides<T extends { readonly name: string; readonly type: string }>(
  entry: T,
  overrides: Overrides,
): T {
  const out: Record<string, unknown> = { ...entry };
  for (const block of blocksFor(entry, overrides)) {
    for (const [key, value] of Object.entries(block)) {
      out[key] = key === 'custom_fields' ? mergeCustomFields(out[key], value) : value;
    }
  }
  return out as T;
}

/** What applying the overrides to `entry` would remove, as JSON pointers (the import warns of them). */
export function findOverrideRemovals(
  entry: { readonly name: string; readonly type: string } & Readonly<Record<string, unknown>>,
  overrides: Overrides,
): string[] {
  if (!overridesApplyTo(entry, overrides)) return [];
  const applied = applyOverrides(entry, overrides) as Readonly<Record<string, unknown>>;
  const removed: string[] = [];
  for (const [key, before] of Object.entries(entry)) {
    if (!Object.hasOwn(applied, key)) continue;
    const after = applied[key];
    const at = `/${escapePointer(key)}`;
    if (before === after) continue;
    if (after === null && before !== null && before !== undefined) removed.push(at);
    else if (Array.isArray(before) && Array.isArray(after)) {
      const kept = new Set(after.map(customFieldName));
      before.forEach((element, i) => {
        const name = key === 'custom_fields' ? customFieldName(element) : undefined;
        if (name === undefined ? !after.some((e) => isDeepEqual(e, element)) : !kept.has(name))
          removed.push(`${at}/${name === undefined ? i : escapePointer(name)}`);
      });
    } else if (isRecord(before) && isRecord(after)) {
      for (const inner of Object.keys(before))
        if (!Object.hasOwn(after, inner)) removed.push(`${at}/${escapePointer(inner)}`);
    }
  }
  return removed;
}

/** Override keys (`byType` types, `byName` names) that match no entry: most likely typos. */
export function findUnusedOverrides(
  overrides: Overrides,
  entries: readonly { readonly name: string; readonly type: string }[],
): string[] {
  const unused = (block: 'byType' | 'byName', used: Set<string>) =>
    Object.keys(overrides[block]).flatMap((key) => (used.has(key) ? [] : [`${block}/${key}`]));
  return [
    ...unused('byType', new Set(entries.map((e) => e.type))),
    ...unused('byName', new Set(entries.map((e) => e.name))),
  ];
}
