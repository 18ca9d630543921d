/**
 * The pieces of GitHub-flavoured Markdown that plans print for a pull-request comment or a change
 * ticket: inline code for names, table rows, and long lists folded in `<details>`. Pure.
 */

/** Lists longer than this are folded in `<details>` (a reviewer opens them when needed). */
export const FOLD_AFTER = 10;

/**
 * A name or path as inline code. A name may hold backticks, `|` (a table cell's end) or a line break:
 * the fence is one backtick longer than the longest run inside, `|` is escaped, and control characters
 * are shown as `\uXXXX`, so every name stays one cell, one item.
 */
export function code(text: string): string {
  const shown = text
    .replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/\|/g, '\\|');
  const longest = Math.max(0, ...[...shown.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(longest + 1);
  const pad = shown.startsWith('`') || shown.endsWith('`') || shown.trim() !== shown ? ' ' : '';
  return `${fence}${pad}${shown}${pad}${fence}`;
}

/** One table row: `| a | b |`. */
export function row(cells: readonly (string | number)[]): string {
  return `| ${cells.join(' | ')} |`;
}

/**
 * A titled list of items: a heading, then the items as a bullet list (an item's own lines indented
 * under it); more than {@link FOLD_AFTER} items are folded in `<details>` under a summary line.
 */
export function section(title: string, items: readonly (readonly string[])[]): string[] {
  if (items.length === 0) return [];
  const bullets = items.flatMap(([first = '', ...rest]) => [`- ${first}`, ...rest.map((l) => `  ${l}`)]);
  if (items.length <= FOLD_AFTER) return [`### ${title}`, '', ...bullets, ''];
  return [
    `### ${title}`,
    '',
    '<details>',
    `<summary>${items.length} items</summary>`,
    '',
    ...bullets,
    '',
    '</details>',
    '',
  ];
}

/** Plain text with the characters Markdown or HTML would read escaped (`\*`, `\<`, ...). */
export function text(value: string): string {
  return value.replace(/[\u0000-\u001f\u007f]/g, ' ').replace(/[\\`*_{}[\]()<>#+!|~&]/g, (c) => `\\${c}`);
}
