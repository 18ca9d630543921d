/**
 * Assign `key` as an own property, even `__proto__` (`JSON.parse` makes it an ordinary key, but
 * `out.__proto__ = v` would set the prototype): every copy of parsed JSON goes through here.
 */
export function assignOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

/** A JSON object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
