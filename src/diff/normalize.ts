/**
 * The canonical forms diff compares in: set-like arrays sorted, `custom_fields` keyed by `field_name`
 * (paths then read `/custom_fields/<field_name>/field_value`). Pure.
 */

import { readPointer } from '../connections/images.js';
import { isRecord } from '../own-property.js';
import { toCanonicalJson } from './values.js';

/**
 * Top-level arrays the service treats as sets: element order means nothing. `custom_fields` is keyed
 * by `field_name` (see {@link keyCustomFields}); `owners_v2` and `tags` are compared as multisets
 * of whole elements (an owner can hold two roles, so no single key identifies one).
 */
export const SET_LIKE_FIELDS: ReadonlySet<string> = new Set(['owners_v2', 'custom_fields', 'tags']);

/** `custom_fields` as an object keyed by `field_name`, or undefined when the names are not distinct strings. */
export function keyCustomFields(fields: readonly unknown[]): Record<string, unknown> | undefined {
  const keyed: Record<string, unknown> = Object.create(null);
  for (const field of fields) {
    if (!isRecord(field) || typeof field.field_name !== 'string') return undefined;
    if (Object.hasOwn(keyed, field.field_name)) return undefined;
    keyed[field.field_name] = field;
  }
  return keyed;
}

/** `custom_fields` as diff reads it: keyed by `field_name` when it can be ({@link keyCustomFields}), else as it is. */
export function customFieldsAsCompared(value: unknown): unknown {
  return (Array.isArray(value) ? keyCustomFields(value) : undefined) ?? value;
}

/**
 * The value a field change's `path` points at in `connection`, read as diff reads it: `custom_fields`
 * keyed by `field_name` ({@link keyCustomFields}), anything else by key or index. Undefined when absent.
 */
export function valueAtComparedPath(connection: Readonly<Record<string, unknown>>, path: string): unknown {
  const compared = Object.hasOwn(connection, 'custom_fields')
    ? { ...connection, custom_fields: customFieldsAsCompared(connection.custom_fields) }
    : connection;
  return readPointer(compared, path);
}

/** Elements in the order of their canonical JSON: the canonical form of a multiset. */
export function sortCanonically(values: readonly unknown[]): unknown[] {
  if (values.length < 2) return [...values];
  return values
    .map((value) => ({ value, key: toCanonicalJson(value) }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((x) => x.value);
}
