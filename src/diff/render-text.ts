/**
 * The plan-like text form of a diff. Pure: returns lines; the command prints them. Colour is the
 * caller's choice (a TTY only), with plain ANSI codes.
 */

import { compareNames } from '../connections/match.js';
import { countOf, displayName } from '../display-name.js';
import { type DiffResult, type FieldChange, hasDifferences, type UncomparableField } from './types.js';

export interface TextRenderOptions {
  /** ANSI colours: green added, red removed, yellow changed, dim not comparable. Default false. */
  readonly color?: boolean;
  /** The type of a connection the diff names, shown as `+ name (type)`, `- name (type)`, `~ name (type)`. */
  readonly typeOf?: (name: string) => string | undefined;
}

const ANSI = {
  green: '\u001b[32m',
  red: '\u001b[31m',
  yellow: '\u001b[33m',
  dim: '\u001b[2m',
  reset: '\u001b[0m',
};

/**
 * The diff as lines of text:
 * `+ name (type)` added, `- name (type)` removed, `~ name (type)` changed with `    /path: <from> -> <to>` lines,
 * all in name order (a changed one's masked secrets named under it); then `? name /path: masked, not
 * compared` lines of the others (the first ten); then the summary line, or
 * `no differences (...)`. Values are JSON (so `"yes"` and `true` look different); an absent side is `(absent)`.
 */
export function renderDiffText(result: DiffResult, options: TextRenderOptions = {}): string[] {
  const paint: Paint = (colour, text) => (options.color ? `${ANSI[colour]}${text}${ANSI.reset}` : text);
  const label = (name: string) => {
    const type = options.typeOf?.(name);
    return `${displayName(name)}${type === undefined || type === '' ? '' : ` (${type})`}`;
  };
  const changed = new Set(result.changed.map((c) => c.name));
  const maskedOfChanged = new Map<string, string[]>();
  // The others' masked fields: the first few shown, the rest counted.
  const maskedOfOthers = { shown: [] as UncomparableField[], count: 0 };
  for (const u of result.uncomparable) {
    if (changed.has(u.name)) maskedOfChanged.set(u.name, [...(maskedOfChanged.get(u.name) ?? []), u.path]);
    else if (maskedOfOthers.count++ < MAX_UNCOMPARABLE_LINES) maskedOfOthers.shown.push(u);
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
  lines.push(
    ...renderUncomparable(maskedOfOthers.shown, maskedOfOthers.count).map((line) => paint('dim', line)),
  );
  lines.push(summarize(result));
  return lines;
}

type Paint = (colour: keyof typeof ANSI, text: string) => string;

/**
 * `+ head` added, `- head` removed, `~ head` changed with its `details` lines under it, in name order
 * (a name is in exactly one of the three: a stable sort by name interleaves them).
 */
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

/** A masked secret of a changed connection, on a line under it. */
const MASKED_OF_CHANGED =
  'masked, not compared (import --on-conflict update writes it when the snapshot or the overrides hold it)';

/** At most this many `?` lines: a whole environment of masked secrets would drown the differences. */
export const MAX_UNCOMPARABLE_LINES = 10;

/**
 * One `? name /path: masked, not compared` line per masked field `shown` (the first
 * {@link MAX_UNCOMPARABLE_LINES} of `count`); beyond them one line says how many more and where to
 * find them all (`--format json`).
 */
function renderUncomparable(shown: readonly UncomparableField[], count: number): string[] {
  const lines = shown.map((u) => `? ${displayName(u.name)} ${u.path}: masked, not compared`);
  const rest = count - shown.length;
  if (rest > 0)
    lines.push(`? ... and ${rest} more masked fields, not compared (--format json lists them all)`);
  return lines;
}

/**
 * The one summary line of a diff, each count with its unit: connections, scan profiles and masked fields
 * are counted apart (`connections: 1 added, 0 removed, 2 changed, 30 unchanged; scan profiles: 0 added,
 * 0 removed, 1 changed; 53 fields masked, not compared`).
 */
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

/**
 * A scan profile's `dataSourceList` change as the connections it gains and loses (`+ a, + b, - c`),
 * not as two long arrays: the lists hold connection names (or an id with no known name). Undefined
 * for any other field.
 */
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

export function showValue(
  field: { readonly from?: unknown; readonly to?: unknown },
  side: 'from' | 'to',
): string {
  if (!Object.hasOwn(field, side)) return '(absent)';
  return JSON.stringify(field[side]) ?? 'null';
}
