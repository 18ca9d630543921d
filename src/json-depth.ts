/**
 * A bound on how deeply a JSON value read from a file or a service may nest. `JSON.parse` builds any
 * depth, but the walkers that compare, mask and write values recurse: a value thousands of levels deep
 * (a damaged file, a hostile answer) would end in a stack overflow, reported as a bug. Connections and
 * scan profiles nest a few levels; one deeper than this is refused where it is read or written, naming
 * it.
 */
export const MAX_JSON_DEPTH = 1000;

/**
 * Levels a document that wraps such objects may nest: a service answer (`data`, a list, an element) or
 * a journal record (an image inside it). More than any wrapping adds, so that an object read once is
 * read again wherever it turns up.
 */
export const MAX_DOCUMENT_DEPTH = MAX_JSON_DEPTH + 64;

/**
 * Whether `value` nests objects and arrays more than `max` levels deep. Iterative; `textLength`, the
 * length of the text it was parsed from, skips the walk when the text is too short to nest that deep
 * (every level takes two characters).
 */
export function nestsTooDeep(
  value: unknown,
  textLength = Number.POSITIVE_INFINITY,
  max = MAX_JSON_DEPTH,
): boolean {
  if (textLength < 2 * max || typeof value !== 'object' || value === null) return false;
  const values: object[] = [value];
  const depths: number[] = [1];
  for (let v = values.pop(); v !== undefined; v = values.pop()) {
    const depth = depths.pop() as number;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (typeof child === 'object' && child !== null) {
        values.push(child);
        depths.push(depth + 1);
      }
    }
  }
  return false;
}
