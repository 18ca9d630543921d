/**
 * Building plain objects from parsed JSON. `JSON.parse` creates `__proto__` as an ordinary own key, but
 * `out.__proto__ = v` would set the prototype instead (dropping the key, or worse): every copy of a
 * parsed object (masking, canonical order, diff normalisation) goes through {@link assignOwn}.
 */

/** Assign `key` as an own, enumerable property, even `__proto__`; plain assignment otherwise (keeps objects fast). */
export function assignOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

/** A JSON object (not an array, not null): what every reader of parsed JSON looks into. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
