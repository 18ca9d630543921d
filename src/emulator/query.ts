/**
 * List queries shared by connections and cases: the JSON filter forms, sort strings, paging and
 * field projection. Errors are thrown as {@link QueryError} and answered 400 `{error}`.
 */
import { type PagingParameter, pageStart } from './deployment.js';

/** A malformed query parameter; the message is sent to the client. */
export class QueryError extends Error {
  override readonly name = 'QueryError';
}

/** One filter condition. */
export interface FilterCondition {
  readonly field: string;
  readonly operator: 'equal' | 'notEqual' | 'in' | 'contains';
  readonly values: readonly unknown[];
}

const OPERATORS = new Set(['equal', 'notEqual', 'in', 'contains']);

/**
 * Parse `filter`: a JSON array `[{"field","value","operator"}]` (api-notes), a single such object, or
 * a plain object `{"caseStatus":"open"}` (the tutorial's form; an array value means "in").
 */
export function parseFilter(raw: string | null): FilterCondition[] {
  if (raw === null || raw.trim() === '') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new QueryError(`filter is not valid JSON: ${raw.slice(0, 200)}`);
  }
  if (Array.isArray(parsed)) return parsed.map((c, i) => toCondition(c, `filter[${i}]`));
  if (parsed !== null && typeof parsed === 'object') {
    const obj = parsed as Record<string, unknown>;
    if (typeof obj.field === 'string' && ('value' in obj || 'operator' in obj))
      return [toCondition(obj, 'filter')];
    return Object.entries(obj).map(([field, value]) => ({
      field,
      operator: Array.isArray(value) ? 'in' : 'equal',
      values: Array.isArray(value) ? value : [value],
    }));
  }
  throw new QueryError('filter must be a JSON array of {field, value, operator} or a JSON object');
}

function toCondition(c: unknown, where: string): FilterCondition {
  if (c === null || typeof c !== 'object' || Array.isArray(c))
    throw new QueryError(`${where} must be an object`);
  const o = c as Record<string, unknown>;
  if (typeof o.field !== 'string' || o.field === '')
    throw new QueryError(`${where}.field must be a non-empty string`);
  const value = o.value;
  const operator = o.operator ?? (Array.isArray(value) ? 'in' : 'equal');
  if (typeof operator !== 'string' || !OPERATORS.has(operator)) {
    throw new QueryError(
      `${where}.operator must be one of equal, notEqual, in, contains; got ${JSON.stringify(operator)}`,
    );
  }
  return {
    field: o.field,
    operator: operator as FilterCondition['operator'],
    values: Array.isArray(value) ? value : [value],
  };
}

/** Value at a dotted path (`owners_v2.id` reaches into arrays of objects too). */
export function getPath(obj: unknown, path: string): unknown {
  if (obj === null || typeof obj !== 'object') return undefined;
  const rec = obj as Record<string, unknown>;
  if (Object.hasOwn(rec, path)) return rec[path];
  const dot = path.indexOf('.');
  if (dot === -1) return undefined;
  const head = rec[path.slice(0, dot)];
  const rest = path.slice(dot + 1);
  if (Array.isArray(head)) return head.flatMap((el) => getPath(el, rest));
  return getPath(head, rest);
}

// Mixed-typed data ("enabled":"yes", "is_ocr_enabled":"false" beside booleans): compare as text too.
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return false;
  if (typeof a === 'object' || typeof b === 'object') return JSON.stringify(a) === JSON.stringify(b);
  return String(a) === String(b);
}

function matchesOne(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(actual)) return actual.some((a) => same(a, expected));
  return same(actual, expected);
}

function containsOne(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(actual)) return actual.some((a) => containsOne(a, expected));
  if (actual === null || actual === undefined || expected === null || expected === undefined) return false;
  const hay = typeof actual === 'object' ? JSON.stringify(actual) : String(actual);
  return hay.toLowerCase().includes(String(expected).toLowerCase());
}

/** True when `item` satisfies every condition. */
export function matchesFilter(item: unknown, conditions: readonly FilterCondition[]): boolean {
  for (const c of conditions) {
    const actual = getPath(item, c.field);
    let ok: boolean;
    switch (c.operator) {
      case 'equal':
      case 'in':
        ok = c.values.some((v) => matchesOne(actual, v));
        break;
      case 'notEqual':
        ok = !c.values.some((v) => matchesOne(actual, v));
        break;
      case 'contains':
        ok = c.values.some((v) => containsOne(actual, v));
        break;
    }
    if (!ok) return false;
  }
  return true;
}

/** One sort key. */
export interface SortKey {
  readonly field: string;
  readonly descending: boolean;
}

/**
 * Parse `sort`: `field`, `-field`, `field:asc|desc`, `field ASC|DESC`, comma-separated keys, or a JSON
 * array `[{"field","order"}]`.
 */
export function parseSort(raw: string | null): SortKey[] {
  if (raw === null || raw.trim() === '') return [];
  const text = raw.trim();
  if (text.startsWith('[') || text.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new QueryError(`sort is not valid JSON: ${text.slice(0, 200)}`);
    }
    const list = Array.isArray(parsed) ? parsed : [parsed];
    return list.map((s, i) => {
      const o = (s ?? {}) as Record<string, unknown>;
      if (typeof o.field !== 'string') throw new QueryError(`sort[${i}].field must be a string`);
      return { field: o.field, descending: parseOrder(String(o.order ?? 'asc')) };
    });
  }
  return text.split(',').map((part) => {
    const p = part.trim();
    const m = /^(-)?([^\s:]+)(?:(?::|\s+)(\w+))?$/.exec(p);
    if (m === null || m[2] === undefined)
      throw new QueryError(`sort '${p}' is not 'field', 'field:asc|desc' or 'field ASC|DESC'`);
    return { field: m[2], descending: m[1] === '-' || (m[3] !== undefined && parseOrder(m[3])) };
  });
}

function parseOrder(order: string): boolean {
  const o = order.toLowerCase();
  if (o === 'asc' || o === '1') return false;
  if (o === 'desc' || o === '-1') return true;
  throw new QueryError(`sort order must be asc or desc, got '${order}'`);
}

function compareValues(a: unknown, b: unknown): number {
  const aMissing = a === undefined || a === null;
  const bMissing = b === undefined || b === null;
  if (aMissing || bMissing) return aMissing === bMissing ? 0 : aMissing ? 1 : -1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = typeof a === 'object' ? JSON.stringify(a) : String(a);
  const sb = typeof b === 'object' ? JSON.stringify(b) : String(b);
  // Code-unit order, like JavaScript's default sort: stable across locales.
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

/** A sorted copy (stable; missing values last whatever the order). */
export function sortItems<T>(items: readonly T[], keys: readonly SortKey[]): T[] {
  if (keys.length === 0) return [...items];
  return [...items].sort((x, y) => {
    for (const k of keys) {
      const a = getPath(x, k.field);
      const b = getPath(y, k.field);
      const aMissing = a === undefined || a === null;
      const bMissing = b === undefined || b === null;
      let c = compareValues(a, b);
      if (k.descending && !aMissing && !bMissing) c = -c;
      if (c !== 0) return c;
    }
    return 0;
  });
}

/** Parse a non-negative integer query parameter. */
export function parseNonNegativeInt(raw: string | null, name: string, fallback: number): number {
  if (raw === null || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0)
    throw new QueryError(`${name} must be a non-negative integer, got '${raw}'`);
  return n;
}

/**
 * Start and `limit` of a list request; `limit` is clamped to `max`, never refused. The start is read
 * from the parameter the deployment honours (`skip` by default: see `deployment.ts`).
 */
export function parsePaging(
  params: URLSearchParams,
  defaultLimit: number,
  max: number,
  start: PagingParameter = 'skip',
): { skip: number; limit: number } {
  const skip = pageStart(params, start, parseNonNegativeInt);
  const limit = Math.min(parseNonNegativeInt(params.get('limit'), 'limit', defaultLimit), max);
  return { skip, limit };
}

/** Parse `fields`: a comma list or a JSON array of names. */
export function parseFields(raw: string | null): string[] | null {
  if (raw === null || raw.trim() === '') return null;
  const text = raw.trim();
  if (text.startsWith('[')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed) && parsed.every((f) => typeof f === 'string')) return parsed;
    } catch {
      // fall through to the error below
    }
    throw new QueryError('fields must be a comma-separated list or a JSON array of strings');
  }
  return text
    .split(',')
    .map((f) => f.trim())
    .filter((f) => f !== '');
}

/** Keep only `fields` (plus `alwaysKeep`) of `item`. */
export function project(
  item: Readonly<Record<string, unknown>>,
  fields: readonly string[],
  alwaysKeep: readonly string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of [...alwaysKeep, ...fields]) {
    if (Object.hasOwn(item, f)) out[f] = item[f];
    else if (f.includes('.')) keepPath(item, out, f.split('.'));
  }
  return out;
}

/** A dotted field (`ticketMetadata.ticketUrl`) kept nested, as a document store projects it. */
function keepPath(
  from: Readonly<Record<string, unknown>>,
  into: Record<string, unknown>,
  path: string[],
): void {
  const [head, ...rest] = path as [string, ...string[]];
  if (!Object.hasOwn(from, head)) return;
  const value = from[head];
  if (rest.length === 0) {
    into[head] = value;
    return;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return;
  const existing = into[head];
  const nested =
    typeof existing === 'object' && existing !== null ? (existing as Record<string, unknown>) : {};
  into[head] = nested;
  keepPath(value as Record<string, unknown>, nested, rest);
}
