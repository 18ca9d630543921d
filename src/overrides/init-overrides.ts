// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:NAME}" is a literal overrides placeholder, not a template
/**
 * `overrides init` (docs/files.md, "overrides init"): a `${env:NAME}` placeholder per secret the snapshot's
 * import needs. Masked `custom_fields` elements are written by `field_name` (import merges by name); a nested
 * mask as its whole top-level field (overrides replace it whole). Names are unique and stable per snapshot.
 */
import { lstat } from 'node:fs/promises';
import { UsageError } from '../errors.js';
import { checkWritableOutput, writeFileAtomic } from '../files.js';
import type { Connection } from '../model/connection.js';
import { assignOwn, isRecord } from '../own-property.js';
import { loadShippedCatalog, type TemplateCatalog } from '../schema/catalog.js';
import { isMasked } from '../secrets.js';
import { loadSnapshot } from '../snapshot/read.js';

export const DEFAULT_VARIABLE_PREFIX = 'DDS';

const PREFIX_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Paths absolute; `outputLabel` as the user typed it. */
export interface InitOverridesOptions {
  readonly snapshot: string;
  readonly output: string;
  readonly outputLabel: string;
  readonly prefix?: string;
  /** Default the shipped ones. */
  readonly schemasDir?: string;
  readonly force: boolean;
  readonly signal?: AbortSignal;
}

export interface OverrideVariable {
  readonly variable: string;
  readonly entry: string;
  /** The field: a top-level key, `custom_fields[<field_name>]`, or a JSON pointer below a top-level key. */
  readonly field: string;
  readonly reason: 'masked' | 'required';
}

export interface InitOverridesResult {
  /** As typed. */
  readonly file: string;
  readonly entryCount: number;
  readonly entriesWithSecrets: number;
  readonly variables: readonly OverrideVariable[];
  readonly overrides: { readonly byName: Readonly<Record<string, Readonly<Record<string, unknown>>>> };
}

/** Check a `--prefix` (exit 2 when it cannot start an environment variable name). */
export function checkVariablePrefix(prefix: string): string {
  if (!PREFIX_PATTERN.test(prefix)) {
    throw new UsageError(`Expected --prefix to start a variable name (letters, digits, _), got '${prefix}'`, {
      hint: 'Use letters, digits and _, not starting with a digit, e.g. --prefix DR',
    });
  }
  return prefix;
}

/** `finance-s3` -> `FINANCE_S3`: upper case, every other character `_`. */
export function toVariablePart(text: string): string {
  return text.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
}

function createNamer(prefix: string): (entry: string, field: string) => string {
  const used = new Set<string>();
  return (entry, field) => {
    const base = `${prefix}_${toVariablePart(entry)}_${toVariablePart(field)}`;
    let name = base;
    for (let n = 2; used.has(name); n++) name = `${base}_${n}`;
    used.add(name);
    return name;
  };
}

/** The override block of one entry (empty when nothing is needed) and its variables. */
function skeletonOf(
  entry: Connection,
  catalog: TemplateCatalog,
  nameVariable: (entry: string, field: string) => string,
): { block: Record<string, unknown>; variables: OverrideVariable[] } {
  const block: Record<string, unknown> = {};
  const variables: OverrideVariable[] = [];
  const placeholder = (field: string, reason: OverrideVariable['reason'], label = field): string => {
    const variable = nameVariable(entry.name, field);
    variables.push({ variable, entry: entry.name, field: label, reason });
    return `\${env:${variable}}`;
  };
  // A value with a mask inside (or a mask itself): the override replaces the field whole.
  const replace = (key: string, v: unknown, pointer: string): unknown => {
    if (isMasked(v)) return placeholder(`${key}${pointer.replace(/\//g, '_')}`, 'masked', `${key}${pointer}`);
    if (Array.isArray(v)) return v.map((item, i) => replace(key, item, `${pointer}/${i}`));
    if (!isRecord(v)) return v;
    const out: Record<string, unknown> = {};
    for (const [k, item] of Object.entries(v)) out[k] = replace(key, item, `${pointer}/${k}`);
    return out;
  };
  for (const [key, value] of Object.entries(entry)) {
    if (key === 'name' || key === 'type' || key === '_id' || key === 'id') continue;
    if (key === 'custom_fields' && Array.isArray(value)) {
      const masked = value.filter(
        (f) => isRecord(f) && isMasked(f.field_value) && typeof f.field_name === 'string',
      );
      if (masked.length > 0) {
        block.custom_fields = masked.map((f) => {
          const field = f as Record<string, unknown>;
          const name = field.field_name as string;
          return { ...field, field_value: placeholder(name, 'masked', `custom_fields[${name}]`) };
        });
      }
      continue;
    }
    const named = variables.length;
    const replaced = replace(key, value, '');
    if (variables.length > named) block[key] = replaced;
  }
  for (const field of catalog.requiredSecretFields(entry.type)) {
    const value = entry[field];
    if ((value === undefined || value === null || value === '') && !(field in block)) {
      block[field] = placeholder(field, 'required');
    }
  }
  return { block, variables };
}

/** Build the skeleton of a snapshot's entries (pure). */
export function buildOverridesSkeleton(
  entries: readonly Connection[],
  catalog: TemplateCatalog,
  prefix: string = DEFAULT_VARIABLE_PREFIX,
): { byName: Record<string, Record<string, unknown>>; variables: OverrideVariable[] } {
  const nameVariable = createNamer(prefix);
  const byName: Record<string, Record<string, unknown>> = {};
  const variables: OverrideVariable[] = [];
  for (const entry of entries) {
    const skeleton = skeletonOf(entry, catalog, nameVariable);
    if (Object.keys(skeleton.block).length === 0) continue;
    assignOwn(byName, entry.name, skeleton.block);
    variables.push(...skeleton.variables);
  }
  return { byName, variables };
}

async function checkOutputFree(path: string, label: string, force: boolean): Promise<void> {
  if (force) return;
  const exists = await lstat(path).then(
    () => true,
    () => false,
  );
  if (exists) {
    throw new UsageError(`${label} already exists; not overwritten`, {
      hint: 'Choose another -o file, or pass --force to replace it',
    });
  }
}

/** Write the overrides skeleton of a snapshot (0600; an existing file only with `force`). */
export async function initOverrides(options: InitOverridesOptions): Promise<InitOverridesResult> {
  const prefix = checkVariablePrefix(options.prefix ?? DEFAULT_VARIABLE_PREFIX);
  // Not even with --force: the snapshot it reads.
  await checkWritableOutput(options.output, '-o', [options.snapshot]);
  await checkOutputFree(options.output, options.outputLabel, options.force);
  const snapshot = await loadSnapshot(options.snapshot, { signal: options.signal });
  const catalog = await loadShippedCatalog(options.schemasDir);
  const { byName, variables } = buildOverridesSkeleton(snapshot.entries, catalog, prefix);
  const overrides = { byName };
  await checkOutputFree(options.output, options.outputLabel, options.force);
  await writeFileAtomic(options.output, `${JSON.stringify(overrides, null, 2)}\n`, {
    hint: 'Check the -o path and that its folder exists',
    what: 'overrides file',
  });
  return {
    file: options.outputLabel,
    entryCount: snapshot.entries.length,
    entriesWithSecrets: Object.keys(byName).length,
    variables,
    overrides,
  };
}
