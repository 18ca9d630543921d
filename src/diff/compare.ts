import { compareNames } from '../connections/match.js';
import { isServerManagedField } from '../connections/server-managed.js';
import { UsageError } from '../errors.js';
import type { Connection } from '../model/connection.js';
import { isRecord } from '../own-property.js';
import { isSecretByName, isSecretFieldName, MASK } from '../secrets.js';
import { compileIgnoreRules, type IgnoreMatcher, type IgnoreRule, parseIgnoreRule } from './ignore.js';
import { customFieldsAsCompared, SET_LIKE_FIELDS, sortCanonically } from './normalize.js';
import { formatPointer } from './pointer.js';
import type { DiffOptions, FieldChange } from './types.js';
import { isDeepEqual, isKnownEqual, redactDeep, redactSecretValue } from './values.js';

const NO_SECRETS: ReadonlySet<string> = new Set();

/** Refuse a side (`holder`: "The --from side") holding two connections of one name: they pair by name. */
export function refuseDuplicateNames(
  holder: string,
  names: readonly string[],
  command: 'diff' | 'verify' = 'diff',
): void {
  if (names.length === 0) return;
  const shown = names
    .slice(0, 5)
    .map((n) => JSON.stringify(n))
    .join(', ');
  const more = names.length > 5 ? ` and ${names.length - 5} more` : '';
  const done = command === 'diff' ? 'compared' : 'verified';
  throw new UsageError(
    `${holder} holds more than one connection named ${shown}${more}: connections are ${done} by name`,
    {
      hint: `Rename the duplicates in that environment, then re-run the ${command}`,
    },
  );
}

/** @throws UsageError naming a bad ignore rule. */
export function compileCompareOptions(options: DiffOptions = {}): CompareOptions {
  const rules = (options.ignoreFields ?? []).map((text): IgnoreRule => {
    const parsed = parseIgnoreRule(text);
    if (!parsed.ok) throw new UsageError(`Expected --ignore-field to be ${parsed.problem}`);
    return parsed.rule;
  });
  return { ignore: compileIgnoreRules(rules), secretFields: options.secretFields ?? (() => NO_SECRETS) };
}

export interface PairComparison {
  readonly fields: FieldChange[];
  /** Pointers of fields masked on at least one side. */
  readonly uncomparable: string[];
}

export interface CompareOptions {
  readonly ignore: IgnoreMatcher;
  readonly secretFields: (type: string) => ReadonlySet<string>;
}

/**
 * Compare two connections of one name, the comparison diff, verify and `import --on-conflict update`
 * share: one structural check per top-level field; only differing ones are keyed and walked.
 */
export function compareConnections(
  from: Connection,
  to: Connection,
  options: CompareOptions,
): PairComparison {
  const a = options.ignore.removeFromEntry(from);
  const b = options.ignore.removeFromEntry(to);
  const differing: string[] = [];
  const consider = (key: string) => {
    if (isServerManagedField(key) || options.ignore.ignoresTopLevel(key)) return;
    if (!isKnownEqual(own(a, key), own(b, key))) differing.push(key);
  };
  for (const key of Object.keys(a)) consider(key);
  for (const key of Object.keys(b)) if (!Object.hasOwn(a, key)) consider(key);
  if (differing.length === 0) return { fields: [], uncomparable: [] };

  differing.sort(compareNames);
  const fromSecrets = options.secretFields(from.type);
  const toSecrets = from.type === to.type ? fromSecrets : options.secretFields(to.type);
  const walk = new Walk(options.ignore);
  for (const key of differing) {
    let av = own(a, key);
    let bv = own(b, key);
    const secret = fromSecrets.has(key) || toSecrets.has(key) || isSecretPairByName(key, av, bv);
    if (key === 'custom_fields') {
      av = customFieldsAsCompared(av);
      bv = customFieldsAsCompared(bv);
    }
    if (key === 'custom_fields' && isRecord(av) && isRecord(bv)) {
      walk.compareCustomFields(av, bv);
    } else if (SET_LIKE_FIELDS.has(key) && Array.isArray(av) && Array.isArray(bv)) {
      walk.compareSets(av, bv, [key], secret);
    } else {
      walk.compare(av, bv, [key], secret);
    }
  }
  return { fields: walk.fields, uncomparable: walk.uncomparable };
}

type Segments = readonly (string | number)[];

/** A secret by its name unless each side holds a flag or a number ({@link isSecretByName}). */
function isSecretPairByName(key: string, a: unknown, b: unknown): boolean {
  if (!isSecretFieldName(key)) return false;
  return (a !== undefined && isSecretByName(key, a)) || (b !== undefined && isSecretByName(key, b));
}

class Walk {
  readonly fields: FieldChange[] = [];
  readonly uncomparable: string[] = [];

  constructor(private readonly ignore: IgnoreMatcher) {}

  compare(a: unknown, b: unknown, path: Segments, secret: boolean): void {
    // The mask first: two masks are equal text but unknown values.
    if (a === MASK || b === MASK) {
      if (!this.ignore.ignoresPath(path)) this.compareMasked(a, b, path);
      return;
    }
    // An object is walked even against itself: it may hold a mask.
    if ((a === b && (typeof a !== 'object' || a === null)) || this.ignore.ignoresPath(path)) return;
    if (secret) {
      if (!isDeepEqual(a, b)) this.change(path, redactSecretValue(a), redactSecretValue(b));
      return;
    }
    if (isRecord(a) && isRecord(b)) {
      for (const key of unionOfKeys(a, b))
        this.compare(
          own(a, key),
          own(b, key),
          [...path, key],
          isSecretPairByName(key, own(a, key), own(b, key)),
        );
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      const length = Math.max(a.length, b.length);
      for (let i = 0; i < length; i++) this.compare(a[i], b[i], [...path, i], false);
      return;
    }
    if (!isDeepEqual(a, b)) this.change(path, redactDeep(a), redactDeep(b));
  }

  /** Set-like arrays: equal as multisets, else reported whole in canonical order. */
  compareSets(a: readonly unknown[], b: readonly unknown[], path: Segments, secret: boolean): void {
    if (this.ignore.ignoresPath(path) || isDeepEqual(a, b)) return;
    const sa = sortCanonically(a);
    const sb = sortCanonically(b);
    if (isDeepEqual(sa, sb)) return;
    if (secret) this.change(path, redactSecretValue(sa), redactSecretValue(sb));
    else this.change(path, redactDeep(sa), redactDeep(sb));
  }

  /** `custom_fields` keyed by `field_name`: an `encrypted` field's value is a secret. */
  compareCustomFields(a: Record<string, unknown>, b: Record<string, unknown>): void {
    for (const name of unionOfKeys(a, b)) {
      const fa = own(a, name);
      const fb = own(b, name);
      const path = ['custom_fields', name];
      if (!isRecord(fa) || !isRecord(fb)) {
        this.compare(fa, fb, path, false);
        continue;
      }
      if (this.ignore.ignoresPath(path)) continue;
      const encrypted = fa.field_type === 'encrypted' || fb.field_type === 'encrypted';
      for (const key of unionOfKeys(fa, fb)) {
        const va = own(fa, key);
        const vb = own(fb, key);
        const secret = (encrypted && key === 'field_value') || isSecretPairByName(key, va, vb);
        this.compare(va, vb, [...path, key], secret);
      }
    }
  }

  /** A mask stands for a non-empty value: against an absent, null or empty one it is a known change. */
  private compareMasked(a: unknown, b: unknown, path: Segments): void {
    const other = a === MASK ? b : a;
    if (other === undefined || other === null || other === '')
      this.change(path, redactSecretValue(a), redactSecretValue(b));
    else this.uncomparable.push(formatPointer(path));
  }

  private change(path: Segments, from: unknown, to: unknown): void {
    const change: { path: string; from?: unknown; to?: unknown } = { path: formatPointer(path) };
    if (from !== undefined) change.from = from;
    if (to !== undefined) change.to = to;
    this.fields.push(change);
  }
}

/** An own property only: a key such as `constructor` must not reach the prototype. */
function own(record: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function unionOfKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const keys = Object.keys(a);
  for (const k of Object.keys(b)) if (!Object.hasOwn(a, k)) keys.push(k);
  return keys.sort(compareNames);
}

const NO_IGNORE_RULES = compileIgnoreRules([]);

/** What `--on-conflict update` updates by: diff's comparison without ignore rules (masks no difference). */
export function findChangedFields(
  from: Connection,
  to: Connection,
  secretFields: (type: string) => ReadonlySet<string> = () => NO_SECRETS,
): readonly FieldChange[] {
  return compareConnections(from, to, { ignore: NO_IGNORE_RULES, secretFields }).fields;
}
