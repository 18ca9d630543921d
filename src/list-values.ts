/**
 * The one syntax of list values on the command line, shared by the CLI's list options and the case
 * filters (`--where FIELD=A,B`): comma-separated, `\,` for a literal comma (policy names may hold one),
 * items trimmed. Whether an empty item is dropped or refused is the caller's rule.
 */

/** Split on commas; `\,` is a literal comma. Items are trimmed; empty items are kept (`'a,,b'` -> `['a', '', 'b']`). */
export function splitEscapedList(value: string): string[] {
  const items: string[] = [];
  let current = '';
  for (let i = 0; i < value.length; i++) {
    const ch = value[i];
    if (ch === '\\' && value[i + 1] === ',') {
      current += ',';
      i++;
    } else if (ch === ',') {
      items.push(current);
      current = '';
    } else {
      current += ch;
    }
  }
  items.push(current);
  return items.map((s) => s.trim());
}

/**
 * The items of a repeatable list option as parsed (`'a,b'`, or `['a,b', 'c']` when given twice), in
 * order, repeats and empty items kept; `[]` for undefined or null.
 */
export function splitListValues(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  return (Array.isArray(value) ? value : [value]).map(String).flatMap(splitEscapedList);
}
