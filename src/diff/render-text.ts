import { compareNames } from '../connections/match.js';
import { countOf, displayName } from '../display-name.js';
import { type DiffResult, type FieldChange, hasDifferences } from './types.js';

export interface TextRenderOptions {
  /** ANSI colours; default false. */
  readonly color?: boolean;
  readonly typeOf?: (name: string) => string | undefined;
}

const ANSI = {
  green: '\u001b[32m',
  red: '\u001b[31m',
  yellow: '\u001b[33m',
  dim: '\u001b[2m',
  reset: '\u001b[0m',
};

/** The diff as plan-like lines (docs/diff.md, "Formats"; golden files in test/). */
export function renderDiffText(result: DiffResult, options: TextRenderOptions = {}): string[] {
  const paint: Paint = (colour, text) => (options.color ? `${ANSI[colour]}${text}${ANSI.reset}` : text);
  const label = (name: string) => {
    const type = options.typeOf?.(name);
    return `${displayName(name)}${type === undefined || type === '' ? '' : ` (${type})`}`;
  };
  const changed = new Set(result.changed.map((c) => c.name));
  const maskedOfChanged = new Map<string, string[]>();
  const maskedOfOthers: string[] = [];
  let othersMasked = 0;
  for (const u of result.uncomparable) {
    if (changed.has(u.name)) maskedOfChanged.set(u.name, [...(maskedOfChanged.get(u.name) ?? []), u.path]);
    else if (othersMasked++ < MAX_UNCOMPARABLE_LINES)
      maskedOfOthers.push(`? ${displayName(u.name)} ${u.path}: masked, not compared`);
  }
  const fieldLine = (field: FieldChange) =>
    `    ${field.path}: ${showValue(field, 'from')} -> ${showValue(field, 'to')}`;
  const lines = sortedBlocks(paint, label, result.added, result.removed, result.changed, (entry) => [
    ...entry.fields.map(fieldLine),
    // An update writes a secret whose value it holds: named here, as the import's plan names it.
    ...(maskedOfChanged.get(entry.name) ?? []).map((path) =>
      paint('dim', `    ${path}: ${MASKED_OF_CHANGED}`),
    ),
  ]);
  const p = result.scanProfiles;
  if (p !== undefined) {
    const head = (name: string) => `scan profile ${displayName(name)}`;
    lines.push(
      ...sortedBlocks(paint, head, p.added, p.removed, p.changed, (entry) =>
        entry.fields.map((field) => {
          const connections = showDataSourceChange(field);
          return connections === undefined
            ? fieldLine(field)
            : `    ${field.path}: connections ${connections}`;
        }),
      ),
    );
  }
  const more = othersMasked - MAX_UNCOMPARABLE_LINES;
  if (more > 0)
    maskedOfOthers.push(`? ... and ${more} more masked fields, not compared (--format json lists them all)`);
  lines.push(...maskedOfOthers.map((line) => paint('dim', line)), summarize(result));
  return lines;
}

type Paint = (colour: keyof typeof ANSI, text: string) => string;

/** `+`, `-` and `~` blocks interleaved in name order (a name is in exactly one of the three). */
function sortedBlocks<C extends { readonly name: string }>(
  paint: Paint,
  head: (name: string) => string,
  added: readonly string[],
  removed: readonly string[],
  changed: readonly C[],
  details: (entry: C) => string[],
): string[] {
  const blocks = [
    ...added.map((name) => ({ name, lines: [paint('green', `+ ${head(name)}`)] })),
    ...removed.map((name) => ({ name, lines: [paint('red', `- ${head(name)}`)] })),
    ...changed.map((c) => ({ name: c.name, lines: [paint('yellow', `~ ${head(c.name)}`), ...details(c)] })),
  ];
  blocks.sort((x, y) => compareNames(x.name, y.name));
  return blocks.flatMap((b) => b.lines);
}

const MASKED_OF_CHANGED =
  'masked, not compared (import --on-conflict update writes it when the snapshot or the overrides hold it)';

/** At most this many `?` lines: a whole environment of masked secrets would drown the differences. */
export const MAX_UNCOMPARABLE_LINES = 10;

/** The summary line: connections, scan profiles and masked fields counted apart. */
export function summarize(result: DiffResult): string {
  const notComparable = result.uncomparable.length;
  const masked = notComparable > 0 ? `${countOf(notComparable, 'field')} masked, not compared` : '';
  if (!hasDifferences(result)) {
    return `no differences (${countOf(result.unchanged, 'connection')} unchanged${masked ? `; ${masked}` : ''})`;
  }
  const p = result.scanProfiles;
  const parts = [
    `connections: ${result.added.length} added, ${result.removed.length} removed, ` +
      `${result.changed.length} changed, ${result.unchanged} unchanged`,
  ];
  if (p !== undefined)
    parts.push(
      `scan profiles: ${p.added.length} added, ${p.removed.length} removed, ${p.changed.length} changed`,
    );
  if (masked) parts.push(masked);
  return parts.join('; ');
}

/** A `dataSourceList` change as the connections gained and lost (`+ a, - c`); undefined for other fields. */
export function showDataSourceChange(field: FieldChange): string | undefined {
  if (field.path !== '/dataSourceList') return undefined;
  const from = field.from ?? [];
  const to = field.to ?? [];
  if (!Array.isArray(from) || !Array.isArray(to)) return undefined;
  const label = (ref: unknown) => (typeof ref === 'string' ? displayName(ref) : JSON.stringify(ref));
  const before = new Set(from.map(label));
  const after = new Set(to.map(label));
  const added = [...after].filter((n) => !before.has(n));
  const removed = [...before].filter((n) => !after.has(n));
  if (added.length === 0 && removed.length === 0) return 'same connections, in another order';
  return [...added.map((n) => `+ ${n}`), ...removed.map((n) => `- ${n}`)].join(', ');
}

/** A side's value as JSON, or `(absent)`. */
export function showValue(
  field: { readonly from?: unknown; readonly to?: unknown },
  side: 'from' | 'to',
): string {
  if (!Object.hasOwn(field, side)) return '(absent)';
  return JSON.stringify(field[side]) ?? 'null';
}
