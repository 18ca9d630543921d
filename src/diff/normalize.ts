import { readPointer } from '../connections/images.js';
import { isRecord } from '../own-property.js';
import { toCanonicalJson } from './values.js';

/**
 * Top-level arrays whose order means nothing: `custom_fields` keyed by `field_name`, the others compared
 * as multisets of whole elements (an owner can hold two roles, so no key identifies one).
 */
export const SET_LIKE_FIELDS: ReadonlySet<string> = new Set(['owners_v2', 'custom_fields', 'tags']);

/** `custom_fields` keyed by `field_name`; undefined unless the names are distinct strings. */
export function keyCustomFields(fields: readonly unknown[]): Record<string, unknown> | undefined {
  const keyed: Record<string, unknown> = Object.create(null);
  for (const field of fields) {
    if (!isRecord(field) || typeof field.field_name !== 'string') return undefined;
    if (Object.hasOwn(keyed, field.field_name)) return undefined;
    keyed[field.field_name] = field;
  }
  return keyed;
}

/** `custom_fields` keyed by `field_name` when it can be, else as it is. */
export function customFieldsAsCompared(value: unknown): unknown {
  return (Array.isArray(value) ? keyCustomFields(value) : undefined) ?? value;
}

/** The value a field change's `path` points at, `custom_fields` keyed as diff keys it. */
export function valueAtComparedPath(connection: Readonly<Record<string, unknown>>, path: string): unknown {
  const compared = Object.hasOwn(connection, 'custom_fields')
    ? { ...connection, custom_fields: customFieldsAsCompared(connection.custom_fields) }
    : connection;
  return readPointer(compared, path);
}

/** The canonical form of a multiset: elements in the order of their canonical JSON. */
export function sortCanonically(values: readonly unknown[]): unknown[] {
  if (values.length < 2) return [...values];
  return values
    .map((value) => ({ value, key: toCanonicalJson(value) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((x) => x.value);
}
