/** Value helpers of the diff: structural equality, canonical JSON, and the redaction of secrets. */

import { isRecord } from '../own-property.js';
import { isSecretByName, MASK } from '../secrets.js';

/**
 * Walk two JSON values in step and compare their leaves with `leafEqual`: same array lengths and
 * order, same key sets (order free). The one walker behind both equalities below, which differ only
 * at the leaves and in whether an identical object may be trusted without a walk.
 */
function isStructurallyEqual(
  a: unknown,
  b: unknown,
  leafEqual: (x: unknown, y: unknown) => boolean,
  trustIdentity: boolean,
): boolean {
  if (typeof a !== 'object' || a === null) return leafEqual(a, b);
  if (typeof b !== 'object' || b === null) return false;
  if (trustIdentity && a === b) return true;
  const same = (x: unknown, y: unknown) => isStructurallyEqual(x, y, leafEqual, trustIdentity);
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!same(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = Object.keys(ra);
  if (keys.length !== Object.keys(rb).length) return false;
  for (const k of keys) {
    if (!Object.hasOwn(rb, k) || !same(ra[k], rb[k])) return false;
  }
  return true;
}

/**
 * Structural equality of JSON values, verbatim: `"yes"` is not `true`, `"1"` is not `1`, key order
 * does not matter, array order does.
 */
export function isDeepEqual(a: unknown, b: unknown): boolean {
  return isStructurallyEqual(a, b, (x, y) => x === y, true);
}

/**
 * {@link isDeepEqual} for deciding that a field is known to be unchanged: the mask is never equal to
 * anything (two masks hide two unknown values), and objects are always walked, never trusted by identity.
 */
export function isKnownEqual(a: unknown, b: unknown): boolean {
  return isStructurallyEqual(a, b, (x, y) => x === y && x !== MASK, false);
}

/** JSON with object keys in code-unit order at every level: equal values give equal text. */
export function toCanonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(toCanonicalJson).join(',')}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${toCanonicalJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * How a secret value is shown: `"******"` for anything non-empty; `""` and `null` stay as they are
 * (an empty optional secret is information, not a secret), a boolean too (a flag is never a secret);
 * `undefined` (absent) stays absent.
 */
export function redactSecretValue(value: unknown): unknown {
  if (value === undefined || value === null || value === '' || typeof value === 'boolean') return value;
  return MASK;
}

/**
 * A copy of `value` that is safe to print: every key that looks like a credential and holds more than
 * a flag or a number ({@link isSecretByName}) and every `field_value` of an `encrypted` custom field is redacted.
 */
export function redactDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactDeep);
  if (!isRecord(value)) return value;
  const encrypted = value.field_type === 'encrypted';
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      isSecretByName(k, v) || (encrypted && k === 'field_value') ? redactSecretValue(v) : redactDeep(v),
    ]),
  );
}
