/**
 * Ignore rules: a top-level field name or a JSON pointer (`*` any key or index), applied to each entry as
 * exported (`/owners_v2/0/email`) and as normalised for comparing (`/custom_fields/cost_center/field_value`).
 */

import { parsePointer } from './pointer.js';

export type IgnoreRule =
  | { readonly kind: 'field'; readonly text: string; readonly field: string }
  | { readonly kind: 'pointer'; readonly text: string; readonly segments: readonly string[] };

export type ParsedIgnoreRule =
  | { readonly ok: true; readonly rule: IgnoreRule }
  | { readonly ok: false; readonly problem: string };

/** The rule, or why `text` is not one. */
export function parseIgnoreRule(text: string): ParsedIgnoreRule {
  if (text.length === 0) return { ok: false, problem: 'a field name or a JSON pointer, got an empty string' };
  if (text.startsWith('/')) {
    const segments = parsePointer(text);
    if (segments === undefined || text === '/') {
      return {
        ok: false,
        problem: `a JSON pointer such as /custom_fields (with ~0 for ~ and ~1 for /), got '${text}'`,
      };
    }
    return { ok: true, rule: { kind: 'pointer', text, segments } };
  }
  if (text.includes('/')) {
    return { ok: false, problem: `a field name or a JSON pointer starting with /, got '${text}'` };
  }
  return { ok: true, rule: { kind: 'field', text, field: text } };
}

export interface IgnoreMatcher {
  ignoresTopLevel(field: string): boolean;
  /** True when the compared document's location `segments` (or a parent of it) is ignored. */
  ignoresPath(segments: readonly (string | number)[]): boolean;
  /** A copy of `entry` without the locations the pointer rules name. */
  removeFromEntry<T extends Record<string, unknown>>(entry: T): T;
}

/** Rules compiled for fast checks on every entry. */
export function compileIgnoreRules(rules: readonly IgnoreRule[]): IgnoreMatcher {
  const topLevel = new Set<string>();
  const pointers: (readonly string[])[] = [];
  for (const rule of rules) {
    if (rule.kind === 'field') topLevel.add(rule.field);
    else if (rule.segments.length === 1 && rule.segments[0] !== '*') topLevel.add(rule.segments[0] as string);
    else pointers.push(rule.segments);
  }
  return {
    ignoresTopLevel: (field) => topLevel.has(field),
    ignoresPath(segments) {
      if (segments.length === 0) return false;
      if (topLevel.has(String(segments[0]))) return true;
      return pointers.some((p) => isPrefix(p, segments));
    },
    removeFromEntry(entry) {
      let out: unknown = entry;
      for (const p of pointers) out = removeAt(out, p);
      return out as typeof entry;
    },
  };
}

function isPrefix(pointer: readonly string[], path: readonly (string | number)[]): boolean {
  if (pointer.length > path.length) return false;
  for (let i = 0; i < pointer.length; i++) {
    if (pointer[i] !== '*' && pointer[i] !== String(path[i])) return false;
  }
  return true;
}

/** A copy of `value` without the location `segments`; a key such as `__proto__` stays its own. */
function removeAt(value: unknown, segments: readonly string[]): unknown {
  const [segment, ...rest] = segments;
  if (segment === undefined || value === null || typeof value !== 'object') return value;
  const hit = (key: string) => segment === '*' || key === segment;
  if (Array.isArray(value)) {
    if (rest.length === 0) return value.filter((_, i) => !hit(String(i)));
    return value.map((v, i) => (hit(String(i)) ? removeAt(v, rest) : v));
  }
  const kept = Object.entries(value).filter(([k]) => rest.length > 0 || !hit(k));
  return Object.fromEntries(kept.map(([k, v]) => [k, hit(k) ? removeAt(v, rest) : v]));
}
