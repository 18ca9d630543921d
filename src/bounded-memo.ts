/** `compute` with its results kept for the first `max` distinct keys (bounded where every key is new). */
export function memoizeBounded<T extends NonNullable<unknown>>(
  compute: (key: string) => T,
  max: number,
): (key: string) => T {
  const kept = new Map<string, T>();
  return (key) => {
    let value = kept.get(key);
    if (value === undefined) {
      value = compute(key);
      if (kept.size < max) kept.set(key, value);
    }
    return value;
  };
}
