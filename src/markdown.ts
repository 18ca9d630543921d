/** The GitHub-flavoured Markdown pieces of plans printed for a pull request or a change ticket. */

/** Lists longer than this are folded in `<details>`. */
export const FOLD_AFTER = 10;

/** A name as inline code that stays one table cell, whatever backticks, `|` or line breaks it holds. */
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

/** A heading and its items as bullets (an item's further lines indented), folded past {@link FOLD_AFTER}. */
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
