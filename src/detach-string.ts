/**
 * A copy of `text` sharing no memory with its source: a value cut from a stream-json chunk is a V8 sliced
 * string that keeps the chunk alive (100 000 names held the whole export body, about 70 MB: bench/export.ts).
 */
export function detachString(text: string): string {
  return Buffer.from(text, 'utf8').toString('utf8');
}
