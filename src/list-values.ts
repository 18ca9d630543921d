/** The one list syntax of the command line: comma-separated, `\,` for a comma; names are never trimmed. */

/** `trim` (types, statuses, ids) or `exact` (names). */
export type ListItems = 'trim' | 'exact';

/** Split on commas (`\,` is a comma); empty items kept: `'a,,b'` -> `['a', '', 'b']`. */
export function splitEscapedList(value: string, items: ListItems = 'trim'): string[] {
  const out = value.split(/(?<!\\),/).map((item) => item.replaceAll('\\,', ','));
  return items === 'exact' ? out : out.map((s) => s.trim());
}

/** The items of a repeatable list option (`'a,b'`, or `['a,b', 'c']` when given twice), in order. */
export function splitListValues(value: unknown, items: ListItems = 'trim'): string[] {
  if (value === undefined || value === null) return [];
  return (Array.isArray(value) ? value : [value]).map(String).flatMap((v) => splitEscapedList(v, items));
}
