/**
 * How deep a connection or scan profile may nest. The walkers that compare, mask and write recurse: thousands
 * of levels (a damaged file, a hostile answer) overflow the stack, a bug exit; deeper is refused on read/write.
 */
export const MAX_JSON_DEPTH = 1000;

/** A document wrapping such objects (an answer, a journal record): more than any wrapping adds. */
export const MAX_DOCUMENT_DEPTH = MAX_JSON_DEPTH + 64;

/** Whether `value` nests over `max` levels, iteratively; a `textLength` under `2 * max` skips the walk. */
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
