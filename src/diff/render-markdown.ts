import { countOf } from '../display-name.js';
import { code, FOLD_AFTER, row, section, text } from '../markdown.js';
import { showDataSourceChange, showValue } from './render-text.js';
import type { DiffResult, FieldChange } from './types.js';

/** Longest value shown in a field line (the JSON form has it whole). */
const VALUE_LENGTH = 80;

/** `diff --format markdown` (docs/diff.md, "Markdown"): secrets named, never valued. */
export function renderDiffMarkdown(
  result: DiffResult,
  labels: { readonly from: string; readonly to: string },
  typeOf: (name: string) => string | undefined = () => undefined,
): string {
  const p = result.scanProfiles;
  const masked = new Map<string, string[]>();
  for (const u of result.uncomparable) {
    const paths = masked.get(u.name) ?? [];
    paths.push(u.path);
    masked.set(u.name, paths);
  }
  const label = (name: string) => {
    const type = typeOf(name);
    return `${code(name)}${type ? ` (${text(type)})` : ''}`;
  };
  const lines = [
    `## Diff: from ${code(labels.from)} to ${code(labels.to)}`,
    '',
    'What `import --on-conflict update --prune` would do to the second side:',
    '',
    row(['', 'Create', 'Update', 'Delete', 'Unchanged']),
    row(['---', '---:', '---:', '---:', '---:']),
    row(['Connections', result.added.length, result.changed.length, result.removed.length, result.unchanged]),
  ];
  if (p !== undefined)
    lines.push(row(['Scan profiles', p.added.length, p.changed.length, p.removed.length, '-']));
  lines.push('');
  const sections: [string, string[][]][] = [
    ['Connections to create', result.added.map((n) => [label(n)])],
    [
      'Connections to update',
      result.changed.map((c) => [
        label(c.name),
        ...c.fields.map((f) => `- ${fieldLine(f)}`),
        ...(masked.get(c.name) ?? []).map((path) => `- secret ${code(path)}: masked, not compared`),
      ]),
    ],
    ['Connections to delete', result.removed.map((n) => [label(n)])],
  ];
  if (p !== undefined) {
    sections.push(
      ['Scan profiles to create', p.added.map((n) => [code(n)])],
      [
        'Scan profiles to update',
        p.changed.map((c) => [
          code(c.name),
          ...c.fields.map((f) => {
            const connections = showDataSourceChange(f);
            return connections === undefined
              ? `- ${fieldLine(f)}`
              : `- ${code(f.path)}: connections ${code(connections)}`;
          }),
        ]),
      ],
      ['Scan profiles to delete', p.removed.map((n) => [code(n)])],
    );
  }
  for (const [title, items] of sections) lines.push(...section(title, items));
  const changed = new Set(result.changed.map((c) => c.name));
  const otherMasked = [...masked].filter(([name]) => !changed.has(name));
  if (otherMasked.length > 0) {
    const count = otherMasked.reduce((n, [, paths]) => n + paths.length, 0);
    lines.push(
      ...section(
        `Secrets masked by the service, not compared (${count} in ${countOf(otherMasked.length, 'unchanged connection')})`,
        otherMasked.map(([name, paths]) => [
          `${label(name)}: ${paths.length > FOLD_AFTER ? `${paths.length} fields` : paths.map((x) => code(x)).join(', ')}`,
        ]),
      ),
    );
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

function fieldLine(field: FieldChange): string {
  const cut = (value: string) =>
    value.length > VALUE_LENGTH ? `${value.slice(0, VALUE_LENGTH - 3)}...` : value;
  return `${code(field.path)}: ${code(cut(showValue(field, 'from')))} → ${code(cut(showValue(field, 'to')))}`;
}
