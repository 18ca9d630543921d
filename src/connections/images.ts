/**
 * Images of a connection kept in journals (before-images of updates and deletes, after-images of
 * creates) and the bodies sent back from them. An image never holds a credential value: every secret
 * (template `x-secret` fields, credential-looking names, encrypted custom fields) is kept as the mask
 * `"******"` when it had a value, so that a later comparison knows it was there.
 */

import { assignOwn } from '../own-property.js';
import { escapePointer } from '../schema/ajv.js';
import { isMasked, maskSecrets } from '../secrets.js';
import { hasServerManagedField, stripServerManaged } from './server-managed.js';

/** A connection without server-managed fields and with every secret masked: safe for a journal. */
export function makeSafeImage(
  connection: Readonly<Record<string, unknown>>,
  secretFields: ReadonlySet<string>,
): Record<string, unknown> {
  // maskSecrets copies: a connection without server-managed fields (a body about to be sent) is not
  // copied first as well.
  return maskSecrets(
    hasServerManagedField(connection) ? stripServerManaged(connection) : connection,
    secretFields,
  );
}

/**
 * A copy of `body` without any masked value (a property whose value is `"******"` is left out; an
 * array element that is the mask is left out too): what an update sends, so that the service keeps the
 * stored secret. Returns the JSON pointers that were left out.
 */
export function dropMaskedValues(body: Readonly<Record<string, unknown>>): {
  body: Record<string, unknown>;
  dropped: string[];
} {
  const dropped: string[] = [];
  const walk = (value: unknown, pointer: string): unknown => {
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      value.forEach((item, i) => {
        if (isMasked(item)) dropped.push(`${pointer}/${i}`);
        else out.push(walk(item, `${pointer}/${i}`));
      });
      return out;
    }
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) {
        const p = `${pointer}/${escapePointer(k)}`;
        if (isMasked(v)) dropped.push(p);
        else assignOwn(out, k, walk(v, p));
      }
      return out;
    }
    return value;
  };
  return { body: walk(body, '') as Record<string, unknown>, dropped };
}

/**
 * JSON pointers of the secret values that `body` holds in clear (what {@link makeSafeImage} would mask
 * and that are not masked already): the secrets an update sends and an undo must supply again.
 */
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

/**
 * A view of `body` for the pre-flight checks of an update, in which a masked value counts as present
 * (the service keeps the stored secret); never sent.
 */
export function fillMaskedForCheck(body: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const walk = (value: unknown): unknown => {
    if (isMasked(value)) return 'kept-by-the-service';
    if (Array.isArray(value)) return value.map(walk);
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value)) assignOwn(out, k, walk(v));
      return out;
    }
    return value;
  };
  return walk(body) as Record<string, unknown>;
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
