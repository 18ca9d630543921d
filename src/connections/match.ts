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
  readonly both: readonly (readonly [S, T])[];
  /** Names held by more than one entry of the source (first is kept in the pairing), in name order. */
  readonly duplicateSource: readonly string[];
  /** Names held by more than one entry of the target, in name order. */
  readonly duplicateTarget: readonly string[];
}

/** Code-unit order, as JavaScript's default sort (contract section 3). */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Index `entries` by name. A name held twice is not silently collapsed: it is recorded in
 * `duplicates` (once per name) and the first entry is kept, so each caller decides (diff refuses, the
 * import planner treats the name as existing).
 */
function indexByName<E extends { readonly name: string }>(
  entries: Iterable<E>,
): { readonly byName: Map<string, E>; readonly duplicates: string[] } {
  const byName = new Map<string, E>();
  const duplicates = new Set<string>();
  for (const e of entries) {
    if (byName.has(e.name)) duplicates.add(e.name);
    else byName.set(e.name, e);
  }
  return { byName, duplicates: [...duplicates].sort(compareNames) };
}

/** Pair `source` and `target` entries by `name`; names held twice on a side are reported, not merged. */
export function pairByName<S extends { readonly name: string }, T extends { readonly name: string }>(
  source: Iterable<S>,
  target: Iterable<T>,
): NamePairing<S, T> {
  const { byName: targetByName, duplicates: duplicateTarget } = indexByName(target);
  const { byName: sourceByName, duplicates: duplicateSource } = indexByName(source);

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
  return { onlySource, onlyTarget, both, duplicateSource, duplicateTarget };
}
