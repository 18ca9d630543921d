/**
 * The one syntax of list values on the command line, shared by the CLI's list options and the case
 * filters (`--where FIELD=A,B`): comma-separated, `\,` for a literal comma (policy names may hold one),
 * items trimmed unless the list holds names (`--only`): a connection name may begin or end with spaces,
 * and `--only 'Sales-DB '` must never select `Sales-DB`. Whether an empty item is dropped or refused is
 * the caller's rule.
 */

/** How the items of a list are read: `trim` (types, statuses, ids) or `exact` (names). */
export type ListItems = 'trim' | 'exact';

/**
 * Split on commas; `\,` is a literal comma. Items are trimmed unless `items` is `exact`; empty items are
 * kept (`'a,,b'` -> `['a', '', 'b']`).
 */
export function splitEscapedList(value: string, items: ListItems = 'trim'): string[] {
  // A comma splits unless a backslash stands before it; `\,` in an item is then the comma itself.
  const out = value.split(/(?<!\\),/).map((item) => item.replaceAll('\\,', ','));
  return items === 'exact' ? out : out.map((s) => s.trim());
}

/**
 * The items of a repeatable list option as parsed (`'a,b'`, or `['a,b', 'c']` when given twice), in
 * order, repeats and empty items kept; `[]` for undefined or null.
 */
export function splitListValues(value: unknown, items: ListItems = 'trim'): string[] {
  if (value === undefined || value === null) return [];
  return (Array.isArray(value) ? value : [value]).map(String).flatMap((v) => splitEscapedList(v, items));
}
