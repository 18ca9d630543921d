/** JSON pointers (RFC 6901), the tiny part diff needs (a token is escaped by the base's escapePointer). */

import { escapePointer } from '../schema/ajv.js';

/** Build a pointer from reference tokens; `[]` is the whole document (`""`). */
export function formatPointer(segments: readonly (string | number)[]): string {
  let out = '';
  for (const s of segments) out += `/${escapePointer(String(s))}`;
  return out;
}

/**
 * Split a pointer into unescaped reference tokens, or return undefined when it is not a pointer
 * (does not start with `/`, or has a `~` not followed by `0` or `1`).
 */
export function parsePointer(pointer: string): string[] | undefined {
  if (!pointer.startsWith('/')) return undefined;
  const segments = pointer.slice(1).split('/');
  for (const s of segments) if (/~(?![01])/.test(s)) return undefined;
  return segments.map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}
