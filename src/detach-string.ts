/**
 * A copy of `text` that shares no memory with the string it came from. A value cut out of a parser's
 * chunk (stream-json matches tokens in 64 KB chunks) is a V8 "sliced string" that keeps the whole chunk
 * alive: 100 000 names held from an export kept the entire export body in memory (about 70 MB for
 * 100 000 connections, measured by bench/export.ts; again in verify, bench/scale.ts). Decoding fresh
 * bytes always makes a new, flat string.
 */
export function detachString(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}
