/**
 * `compute` with its results kept by key, for the first `max` distinct keys; later keys are computed
 * each time (a bound for data where every key is new). For a small pure function asked the same few
 * keys many times over: a field name's secret verdict, a field's JSON pointer.
 */
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
