/**
 * Fault rules: parsing the `--faults` string and deciding, per request, which fault applies.
 *
 * Syntax (comma-separated rules): `kind[=value][:probability][@[METHOD:]path]`, e.g.
 * `commit-then-drop:0.05@POST:/ds_connections,500:0.02,reset:0.01@GET:*,latency=2000:0.1`.
 * Probability is 0..1 or a percentage (`5%`), default 1. Paths are relative to `/api/v1` and may
 * use `*` as a wildcard; the method defaults to any.
 */
import { FAULT_KINDS, type FaultKind, type FaultRule } from './types.js';

/** Faults that replace the normal answer; the first one drawn wins. */
const TERMINAL: ReadonlySet<FaultKind> = new Set([
  '429',
  '500',
  'commit-then-drop',
  'commit-then-500',
  'html-502',
  'reset',
  'trickle',
  'oversize',
  'oversize-gzip',
]);

/** Parse a fault spec string (or validate an array of rules). Throws `Error` with a pointed message. */
export function parseFaults(spec: string | readonly FaultRule[] | undefined): FaultRule[] {
  if (spec === undefined) return [];
  if (typeof spec !== 'string') return spec.map((r) => checkRule(r, JSON.stringify(r)));
  const rules: FaultRule[] = [];
  for (const raw of spec.split(',')) {
    const text = raw.trim();
    if (text === '') continue;
    const at = text.indexOf('@');
    const head = at === -1 ? text : text.slice(0, at);
    const target = at === -1 ? '*' : text.slice(at + 1).trim();
    const colon = head.indexOf(':');
    const kindPart = colon === -1 ? head : head.slice(0, colon);
    const probPart = colon === -1 ? undefined : head.slice(colon + 1).trim();
    const eq = kindPart.indexOf('=');
    const kind = (eq === -1 ? kindPart : kindPart.slice(0, eq)).trim();
    const valuePart = eq === -1 ? undefined : kindPart.slice(eq + 1).trim();
    let probability = 1;
    if (probPart !== undefined) {
      probability = probPart.endsWith('%') ? Number(probPart.slice(0, -1)) / 100 : Number(probPart);
    }
    const { method, path } = parseTarget(target);
    const rule: FaultRule = {
      kind: kind as FaultKind,
      probability,
      method,
      path,
      ...(valuePart === undefined ? {} : { value: Number(valuePart) }),
    };
    rules.push(checkRule(rule, text));
  }
  return rules;
}

function parseTarget(target: string): { method: string; path: string } {
  if (target === '' || target === '*') return { method: '*', path: '*' };
  const colon = target.indexOf(':');
  if (colon !== -1) {
    const maybeMethod = target.slice(0, colon);
    const rest = target.slice(colon + 1);
    // A path may hold ':' itself (`cases:update`), so only a method-shaped prefix counts as the method.
    if (
      /^([A-Za-z]+|\*)$/.test(maybeMethod) &&
      (rest.startsWith('/') || rest.startsWith('*') || rest === '')
    ) {
      return { method: maybeMethod.toUpperCase(), path: normalisePath(rest === '' ? '*' : rest) };
    }
  }
  if (/^[A-Za-z]+$/.test(target)) return { method: target.toUpperCase(), path: '*' };
  return { method: '*', path: normalisePath(target) };
}

function normalisePath(path: string): string {
  if (path === '*') return path;
  let p = path.startsWith('/') || path.startsWith('*') ? path : `/${path}`;
  if (p.startsWith('/api/v1/')) p = p.slice('/api/v1'.length);
  return p;
}

function checkRule(rule: FaultRule, source: string): FaultRule {
  if (!FAULT_KINDS.includes(rule.kind)) {
    throw new Error(
      `Unknown fault kind '${rule.kind}' in '${source}'; expected one of ${FAULT_KINDS.join(', ')}`,
    );
  }
  if (!Number.isFinite(rule.probability) || rule.probability < 0 || rule.probability > 1) {
    throw new Error(`Expected a fault probability between 0 and 1 (or 0%..100%) in fault rule '${source}'`);
  }
  if (rule.value !== undefined && (!Number.isFinite(rule.value) || rule.value < 0)) {
    throw new Error(`Expected a non-negative number after '=' in fault rule '${source}'`);
  }
  // Node's timer overflows past 2^31 - 1 ms and fires at once: a latency rule waits at most 10 minutes.
  if (rule.kind === 'latency' && rule.value !== undefined && rule.value > 600_000) {
    throw new Error(`Expected a latency of at most 600000 ms in fault rule '${source}'`);
  }
  return {
    kind: rule.kind,
    probability: rule.probability,
    method: (rule.method ?? '*').toUpperCase(),
    path: normalisePath(rule.path ?? '*'),
    ...(rule.value === undefined ? {} : { value: rule.value }),
  };
}

const globCache = new Map<string, RegExp>();

function globToRegExp(glob: string): RegExp {
  let re = globCache.get(glob);
  if (re === undefined) {
    const body = glob
      .split('*')
      .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    re = new RegExp(`^${body}$`);
    globCache.set(glob, re);
  }
  return re;
}

/** True when `rule` targets this request. `relPath` is the path below `/api/v1`, without the query. */
export function ruleMatches(rule: FaultRule, method: string, relPath: string): boolean {
  const m = rule.method ?? '*';
  if (m !== '*' && m !== method) return false;
  const p = rule.path ?? '*';
  return p === '*' || globToRegExp(p).test(relPath);
}

/** What the faults decided for one request. */
export interface FaultDecision {
  /** The fault replacing the normal answer, or null. */
  readonly terminal: FaultKind | null;
  /** Retry-After seconds for a `429` fault. */
  readonly retryAfterSeconds: number;
  /** The terminal rule's `=value`, when it had one (ms per byte of `trickle`, MiB of `oversize*`). */
  readonly terminalValue: number | undefined;
  /** Extra delay from `latency` rules, ms. */
  readonly extraLatencyMs: number;
  /** Label the JSON answer `text/html`. */
  readonly htmlContentType: boolean;
}

/**
 * Draw the faults for one request. Every matching rule draws once, in rule order, whether or not an
 * earlier one hit, so the sequence of draws (and so the run) depends only on the seed and the requests.
 */
export function decideFaults(
  rules: readonly FaultRule[],
  method: string,
  relPath: string,
  random: () => number,
): FaultDecision {
  let terminal: FaultKind | null = null;
  let retryAfterSeconds = 1;
  let terminalValue: number | undefined;
  let extraLatencyMs = 0;
  let htmlContentType = false;
  for (const rule of rules) {
    if (!ruleMatches(rule, method, relPath)) continue;
    const hit = random() < rule.probability;
    if (!hit) continue;
    if (rule.kind === 'latency') extraLatencyMs += rule.value ?? 1000;
    else if (rule.kind === 'html-content-type') htmlContentType = true;
    else if (terminal === null && TERMINAL.has(rule.kind)) {
      terminal = rule.kind;
      terminalValue = rule.value;
      if (rule.kind === '429') retryAfterSeconds = Math.max(1, Math.ceil(rule.value ?? 1));
    }
  }
  return { terminal, retryAfterSeconds, terminalValue, extraLatencyMs, htmlContentType };
}
