/**
 * Matching two sets of connections by name, the natural key. Pure. `diff` and the import planner both
 * use it, so `import --dry-run` and `diff` agree on what would be created.
 */

/** The result of pairing two sets by name. Arrays are in code-unit order of name. */
export interface NamePairing<S, T> {
  /** In the source only (a diff's "added", an import's "create"). */
  readonly onlySource: readonly S[];
  /** In the target only (a diff's "removed"). */
  readonly onlyTarget: readonly T[];
  /** In both. */
  readonly both: readonly (readonly [S, T])[];
}

/** Code-unit order, as JavaScript's default sort (contract section 3). */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Pair `source` and `target` entries by `name`. Later duplicates of a name in one set win. */
export function pairByName<S extends { readonly name: string }, T extends { readonly name: string }>(
  source: Iterable<S>,
  target: Iterable<T>,
): NamePairing<S, T> {
  const targetByName = new Map<string, T>();
  for (const t of target) targetByName.set(t.name, t);
  const sourceByName = new Map<string, S>();
  for (const s of source) sourceByName.set(s.name, s);

  const onlySource: S[] = [];
  const both: (readonly [S, T])[] = [];
  for (const [name, s] of sourceByName) {
    const t = targetByName.get(name);
    if (t === undefined) onlySource.push(s);
    else both.push([s, t]);
  }
  const onlyTarget = [...targetByName.values()].filter((t) => !sourceByName.has(t.name));
  const byName = (x: { readonly name: string }, y: { readonly name: string }) => compareNames(x.name, y.name);
  onlySource.sort(byName);
  onlyTarget.sort(byName);
  both.sort((x, y) => compareNames(x[0].name, y[0].name));
  return { onlySource, onlyTarget, both };
}
