/**
 * The plan-like text form of a diff. Pure: returns lines; the command prints them. Colour is the
 * caller's choice (a TTY only), with plain ANSI codes.
 */

import { compareNames } from '../connections/match.js';
import { displayName } from '../display-name.js';
import { type DiffResult, hasDifferences } from './types.js';

/** Options of {@link renderDiffText}. */
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
  const paint = (colour: keyof typeof ANSI, text: string) =>
    options.color ? `${ANSI[colour]}${text}${ANSI.reset}` : text;
  const label = (name: string) => {
    const type = options.typeOf?.(name);
    return `${displayName(name)}${type === undefined || type === '' ? '' : ` (${type})`}`;
  };
  const blocks: { name: string; lines: string[] }[] = [];
  for (const name of result.added) blocks.push({ name, lines: [paint('green', `+ ${label(name)}`)] });
  for (const name of result.removed) blocks.push({ name, lines: [paint('red', `- ${label(name)}`)] });
  const changed = new Set(result.changed.map((c) => c.name));
  const maskedOfChanged = new Map<string, string[]>();
  for (const u of result.uncomparable)
    if (changed.has(u.name)) maskedOfChanged.set(u.name, [...(maskedOfChanged.get(u.name) ?? []), u.path]);
  for (const entry of result.changed) {
    const lines = [paint('yellow', `~ ${label(entry.name)}`)];
    for (const field of entry.fields) {
      lines.push(`    ${field.path}: ${showValue(field, 'from')} -> ${showValue(field, 'to')}`);
    }
    // An update writes a secret whose value it holds: named here, as the import's plan names it.
    for (const path of maskedOfChanged.get(entry.name) ?? [])
      lines.push(paint('dim', `    ${path}: ${MASKED_OF_CHANGED}`));
    blocks.push({ name: entry.name, lines });
  }
  // A name is in exactly one of added, removed, changed: a stable sort by name interleaves them.
  blocks.sort((x, y) => compareNames(x.name, y.name));
  const lines = blocks.flatMap((b) => b.lines);
  lines.push(...renderProfiles(result, paint));
  const rest = { ...result, uncomparable: result.uncomparable.filter((u) => !changed.has(u.name)) };
  lines.push(...renderUncomparable(rest).map((line) => paint('dim', line)));
  lines.push(summarize(result));
  return lines;
}

/** The scan profile part: `+ scan profile NAME`, `- scan profile NAME`, `~ scan profile NAME` with field lines. */
function renderProfiles(
  result: DiffResult,
  paint: (colour: keyof typeof ANSI, text: string) => string,
): string[] {
  const p = result.scanProfiles;
  if (p === undefined) return [];
  const blocks: { name: string; lines: string[] }[] = [];
  for (const name of p.added)
    blocks.push({ name, lines: [paint('green', `+ scan profile ${displayName(name)}`)] });
  for (const name of p.removed)
    blocks.push({ name, lines: [paint('red', `- scan profile ${displayName(name)}`)] });
  for (const entry of p.changed) {
    const lines = [paint('yellow', `~ scan profile ${displayName(entry.name)}`)];
    for (const field of entry.fields) {
      const connections = field.path === '/dataSourceList' ? showDataSourceChange(field) : undefined;
      if (connections !== undefined) lines.push(`    ${field.path}: connections ${connections}`);
      else lines.push(`    ${field.path}: ${showValue(field, 'from')} -> ${showValue(field, 'to')}`);
    }
    blocks.push({ name: entry.name, lines });
  }
  blocks.sort((x, y) => compareNames(x.name, y.name));
  return blocks.flatMap((b) => b.lines);
}

/** A masked secret of a changed connection, on a line under it. */
const MASKED_OF_CHANGED =
  'masked, not compared (import --on-conflict update writes it when the snapshot or the overrides hold it)';

/** At most this many `?` lines: a whole environment of masked secrets would drown the differences. */
export const MAX_UNCOMPARABLE_LINES = 10;

/**
 * One `? name /path: masked, not compared` line per masked field, at most {@link MAX_UNCOMPARABLE_LINES};
 * beyond that one line says how many more and where to find them all (`--format json`).
 */
function renderUncomparable(result: DiffResult): string[] {
  const shown = result.uncomparable.slice(0, MAX_UNCOMPARABLE_LINES);
  const lines = shown.map((u) => `? ${displayName(u.name)} ${u.path}: masked, not compared`);
  const rest = result.uncomparable.length - shown.length;
  if (rest > 0)
    lines.push(`? ... and ${rest} more masked fields, not compared (--format json lists them all)`);
  return lines;
}

/** `1 connection`, `2 connections`. */
function count(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/**
 * The one summary line of a diff, each count with its unit: connections, scan profiles and masked fields
 * are counted apart (`connections: 1 added, 0 removed, 2 changed, 30 unchanged; scan profiles: 0 added,
 * 0 removed, 1 changed; 53 fields masked, not compared`).
 */
export function summarize(result: DiffResult): string {
  const notComparable = result.uncomparable.length;
  const masked = notComparable > 0 ? `${count(notComparable, 'field')} masked, not compared` : '';
  if (!hasDifferences(result)) {
    return `no differences (${count(result.unchanged, 'connection')} unchanged${masked ? `; ${masked}` : ''})`;
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
 * not as two long arrays: the lists hold connection names (or an id with no known name).
 */
export function showDataSourceChange(field: {
  readonly from?: unknown;
  readonly to?: unknown;
}): string | undefined {
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
