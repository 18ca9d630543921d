/**
 * Connections are matched by name, their natural key, in one order everywhere: the diff, the import
 * planner, the runs and every sorted output.
 */

/** Code-unit order, as JavaScript's default sort (contract section 3). */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
