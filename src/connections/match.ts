/** Names in code-unit order, as JavaScript's default sort, everywhere (contract section 3). */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
