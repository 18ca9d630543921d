import { isRecord } from '../own-property.js';
import { isSecretByName, MASK } from '../secrets.js';

/** Two JSON values walked in step, leaves compared by `leafEqual`; key order free, array order not. */
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

/** Structural equality of JSON values, verbatim: `"yes"` is not `true`. */
export function isDeepEqual(a: unknown, b: unknown): boolean {
  return isStructurallyEqual(a, b, (x, y) => x === y, true);
}

/** {@link isDeepEqual} for "known unchanged": a mask equals nothing, so identical objects are walked. */
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

/** A secret value as shown: the mask, but `""`, `null`, a flag and absent are information and stay. */
export function redactSecretValue(value: unknown): unknown {
  if (value === undefined || value === null || value === '' || typeof value === 'boolean') return value;
  return MASK;
}

/** A copy safe to print: credential-named keys and an `encrypted` custom field's value redacted. */
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
