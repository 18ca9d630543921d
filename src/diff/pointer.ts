import { escapePointer } from '../schema/ajv.js';

/** A JSON pointer (RFC 6901) of reference tokens; `[]` is `""`. */
export function formatPointer(segments: readonly (string | number)[]): string {
  let out = '';
  for (const s of segments) out += `/${escapePointer(String(s))}`;
  return out;
}

/** A pointer's unescaped reference tokens; undefined when it is not a pointer. */
export function parsePointer(pointer: string): string[] | undefined {
  if (!pointer.startsWith('/')) return undefined;
  const segments = pointer.slice(1).split('/');
  for (const s of segments) if (/~(?![01])/.test(s)) return undefined;
  return segments.map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}
