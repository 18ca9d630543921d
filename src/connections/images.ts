/**
 * Images of a connection kept in journals, and the bodies sent back from them. An image never holds a
 * credential: a secret that had a value is kept as the mask, so a later comparison knows it was there.
 */

import { assignOwn, isRecord } from '../own-property.js';
import { escapePointer } from '../schema/ajv.js';
import { isMasked, maskSecrets } from '../secrets.js';
import { hasServerManagedField, stripServerManaged } from './server-managed.js';

/** A connection without server-managed fields and with every secret masked: safe for a journal. */
export function makeSafeImage(
  connection: Readonly<Record<string, unknown>>,
  secretFields: ReadonlySet<string>,
): Record<string, unknown> {
  // maskSecrets copies: a body about to be sent (nothing to strip) is not copied twice.
  return maskSecrets(
    hasServerManagedField(connection) ? stripServerManaged(connection) : connection,
    secretFields,
  );
}

/** A copy of `value` with every mask replaced by `replacement()`, or left out where that is undefined. */
function mapMasked(value: unknown, replacement: () => unknown): unknown {
  const map = (v: unknown) => (isMasked(v) ? replacement() : mapMasked(v, replacement));
  if (Array.isArray(value)) return value.map(map).filter((v) => v !== undefined);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const mapped = map(v);
    if (mapped !== undefined) assignOwn(out, k, mapped);
  }
  return out;
}

/**
 * `base` with each of its masks replaced by the clear value `source` holds at the same place (custom fields
 * matched by `field_name`). What an undo takes from `--overrides`: only the secrets a before-image cannot hold.
 */
export function fillMaskedFrom(base: unknown, source: unknown): unknown {
  if (isMasked(base)) return source === undefined || source === null || isMasked(source) ? base : source;
  if (Array.isArray(base)) {
    const others = Array.isArray(source) ? source : [];
    return base.map((element, i) => {
      const name = customFieldName(element);
      const match = name === undefined ? others[i] : others.find((o) => customFieldName(o) === name);
      return fillMaskedFrom(element, match);
    });
  }
  if (base === null || typeof base !== 'object') return base;
  const from = source !== null && typeof source === 'object' ? (source as Record<string, unknown>) : {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(base)) assignOwn(out, k, fillMaskedFrom(v, from[k]));
  return out;
}

/** The `field_name` of a custom field, if it has one. */
export function customFieldName(element: unknown): string | undefined {
  return isRecord(element) && typeof element.field_name === 'string' ? element.field_name : undefined;
}

/** `body` without its masked values: what an update sends, so the service keeps the stored secret. */
export function dropMaskedValues(body: Readonly<Record<string, unknown>>): { body: Record<string, unknown> } {
  return { body: mapMasked(body, () => undefined) as Record<string, unknown> };
}

/** JSON pointers of the secrets `body` holds in clear: what an update sends and an undo must supply again. */
export function findClearSecrets(
  body: Readonly<Record<string, unknown>>,
  secretFields: ReadonlySet<string>,
): string[] {
  const masked = maskSecrets(body as Record<string, unknown>, secretFields);
  const found: string[] = [];
  const walk = (a: unknown, b: unknown, pointer: string): void => {
    if (isMasked(b) && !isMasked(a)) {
      found.push(pointer);
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      for (let i = 0; i < a.length; i++) walk(a[i], b[i], `${pointer}/${i}`);
    } else if (a !== null && typeof a === 'object' && b !== null && typeof b === 'object') {
      for (const k of Object.keys(a))
        walk(
          (a as Record<string, unknown>)[k],
          (b as Record<string, unknown>)[k],
          `${pointer}/${escapePointer(k)}`,
        );
    }
  };
  walk(body, masked, '');
  return found;
}

/** `body` for an update's pre-flight, a mask counting as present (the service keeps it); never sent. */
export function fillMaskedForCheck(body: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return mapMasked(body, () => 'kept-by-the-service') as Record<string, unknown>;
}

/** The value at a JSON pointer (own properties only), or undefined. */
export function readPointer(value: unknown, pointer: string): unknown {
  if (pointer === '') return value;
  let current: unknown = value;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (current === null || typeof current !== 'object' || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}
