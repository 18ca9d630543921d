/**
 * The diff itself: two sets of connections in, a {@link DiffResult} out. Pure (no fs, no HTTP, no
 * logger). Connections are paired by name with the same `pairByName` the import planner uses, so
 * `diff`'s "added" is exactly what `import --dry-run` would create.
 */

import { memoizeBounded } from '../bounded-memo.js';
import { compareNames, pairByName } from '../connections/match.js';
import { isServerManagedField } from '../connections/server-managed.js';
import { UsageError } from '../errors.js';
import type { Connection } from '../model/connection.js';
import { isSecretByName, isSecretFieldName, MASK, type MaskAnswer } from '../secrets.js';
import { compileIgnoreRules, type IgnoreMatcher, type IgnoreRule, parseIgnoreRule } from './ignore.js';
import {
  customFieldAsCompared,
  customFieldsAsCompared,
  type normalizeForCompare,
  SET_LIKE_FIELDS,
  sortCanonically,
} from './normalize.js';
import { formatPointer } from './pointer.js';
import type { ChangedConnection, DiffOptions, DiffResult, FieldChange, UncomparableField } from './types.js';
import { isDeepEqual, isKnownEqual, isPlainObject, redactDeep, redactSecretValue } from './values.js';

const NO_SECRETS: ReadonlySet<string> = new Set();

/**
 * Compare `from` with `to`. `added` = only in `from`, `removed` = only in `to`; for connections in
 * both, every compared field that differs, by JSON pointer. No secret value ever appears in the result:
 * a changed secret shows `"******"` on both sides, and a field the service masked (`"******"`) on a
 * side is listed in `uncomparable` instead of being compared.
 *
 * @throws UsageError when an ignore rule is neither a field name nor a JSON pointer, or when a side
 * holds two connections of one name.
 */
export function diffConnections(
  from: Iterable<Connection>,
  to: Iterable<Connection>,
  options: DiffOptions = {},
): DiffResult {
  const ignore = compileIgnoreRules(parseIgnoreRules(options.ignoreFields ?? []));
  const secretFields = options.secretFields ?? (() => NO_SECRETS);
  const pairing = pairByName(from, to);
  refuseDuplicateNames('--from', pairing.duplicateSource);
  refuseDuplicateNames('--to', pairing.duplicateTarget);
  const changed: ChangedConnection[] = [];
  const uncomparable: UncomparableField[] = [];
  let unchanged = 0;
  for (const [a, b] of pairing.both) {
    const outcome = compareConnections(a, b, { ignore, secretFields });
    for (const path of outcome.uncomparable) uncomparable.push({ name: a.name, path });
    if (outcome.fields.length === 0) unchanged++;
    else changed.push({ name: a.name, fields: outcome.fields });
  }
  return {
    added: pairing.onlySource.map((c) => c.name),
    removed: pairing.onlyTarget.map((c) => c.name),
    changed,
    unchanged,
    uncomparable,
  };
}

/**
 * A side holding two connections of one name cannot be compared by name (export refuses such an
 * environment too): a usage error naming the side and the names, rather than one of them kept silently.
 */
export function refuseDuplicateNames(side: string, names: readonly string[]): void {
  if (names.length === 0) return;
  const shown = names
    .slice(0, 5)
    .map((n) => JSON.stringify(n))
    .join(', ');
  const more = names.length > 5 ? ` and ${names.length - 5} more` : '';
  throw new UsageError(
    `The ${side} side holds more than one connection named ${shown}${more}: connections are compared by name`,
    { hint: 'Rename the duplicates in that environment, then re-run the diff' },
  );
}

/**
 * The compiled form of {@link DiffOptions} that {@link compareConnections} takes.
 *
 * @throws UsageError naming a bad ignore rule.
 */
export function compileCompareOptions(options: DiffOptions = {}): CompareOptions {
  return {
    ignore: compileIgnoreRules(parseIgnoreRules(options.ignoreFields ?? [])),
    secretFields: options.secretFields ?? (() => NO_SECRETS),
  };
}

/**
 * Parse ignore rules given as text.
 *
 * @throws UsageError naming the bad rule.
 */
function parseIgnoreRules(texts: readonly string[]): IgnoreRule[] {
  return texts.map((text) => {
    const parsed = parseIgnoreRule(text);
    if (!parsed.ok) throw new UsageError(`Expected --ignore-field to be ${parsed.problem}`);
    return parsed.rule;
  });
}

/** What comparing one pair found. */
export interface PairComparison {
  readonly fields: FieldChange[];
  /** Pointers of fields masked on at least one side. */
  readonly uncomparable: string[];
}

/** Options of {@link compareConnections}, already compiled. */
export interface CompareOptions {
  readonly ignore: IgnoreMatcher;
  readonly secretFields: (type: string) => ReadonlySet<string>;
}

/**
 * Compare two connections of the same name, field by field. The common case (a field equal on both
 * sides) is decided by one structural check per top-level field; only differing fields are sorted,
 * keyed and walked. Equivalent to comparing the {@link normalizeForCompare} forms of both.
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
    if (key === 'custom_fields' && isPlainObject(av) && isPlainObject(bv)) {
      walk.compareCustomFields(av, bv);
    } else if (SET_LIKE_FIELDS.has(key) && Array.isArray(av) && Array.isArray(bv)) {
      walk.compareSets(av, bv, [key], secret);
    } else {
      walk.compare(av, bv, [key], secret);
    }
  }
  return { fields: walk.fields, uncomparable: walk.uncomparable };
}

/**
 * What {@link compareConnections} finds for `entry` against an equal copy of itself (two byte-equal
 * snapshot lines), without making the copy: no changed field, and the pointers of the masked values
 * it would list as uncomparable, in the same order (depth first, keys in code-unit order). The few
 * masks found are sorted at the end, so the walk goes in whatever order is cheapest: the top-level
 * values first (where the usual masked credential is), then what is below them.
 *
 * `masksInText`, when known, bounds the masks the entry can hold (see `maskTokensIn` of
 * `merged.ts`: the mask tokens of its JSON text): once that many are met, nothing more is walked.
 */
export function maskedPointers(entry: Connection, options: CompareOptions, masksInText?: number): string[] {
  return maskedSegments(entry, options, masksInText).map(formatFound);
}

/** {@link maskedPointers} as reference tokens, in their order. */
function maskedSegments(
  entry: Connection,
  options: CompareOptions,
  masksInText: number | undefined,
): (string | number)[][] {
  // Removing values only lowers the masks the entry holds: the text's count still bounds them.
  const a = options.ignore.removeFromEntry(entry);
  const finder = new MaskFinder(options.ignore, masksInText ?? Number.POSITIVE_INFINITY);
  const keys = Object.keys(a);
  for (const key of keys) {
    if (a[key] !== MASK) continue;
    if (isServerManagedField(key) || options.ignore.ignoresTopLevel(key)) finder.passed();
    else finder.at(key, MASK, false);
  }
  if (finder.done) return finder.segments();
  const secrets = options.secretFields(entry.type);
  for (const key of keys) {
    let value = a[key];
    if (typeof value !== 'object' || value === null) continue;
    if (isServerManagedField(key) || options.ignore.ignoresTopLevel(key)) continue;
    if (key === 'custom_fields') value = customFieldsAsCompared(value);
    if (key === 'custom_fields' && isPlainObject(value)) finder.inCustomFields(value);
    else if (SET_LIKE_FIELDS.has(key) && Array.isArray(value)) {
      // compareSets: two equal sets are equal, masks and all.
    } else finder.at(key, value, secrets.has(key) || isSecretFieldName(key));
    if (finder.done) break;
  }
  return finder.segments();
}

/**
 * Where a mask was found, in a shape whose finding depends on its path alone (not on the values
 * around it): a top-level value, or a value of a `custom_fields` element (keyed by `field_name`).
 */
type MaskPlace = readonly [key: string] | readonly ['custom_fields', field: string, key: string];

/**
 * What the mask finder reads masks of: a connection, or a snapshot line that holds one (parsed only
 * when its text cannot answer: see `EqualLines` of `src/snapshot/merge.ts`).
 */
export interface MaskSource {
  readonly type: string;
  /** The connection (a line is parsed when first asked). */
  entry(): Connection;
  /** The line's scanned text, when there is one: whether it holds the mask at a place. */
  readonly scan?: MaskText | undefined;
}

/** A line's text, as `EntryLineScan` (src/snapshot/line-scan.ts) reads it. */
export interface MaskText {
  maskAt(key: string): MaskAnswer;
  customMaskAt(field: string, key: string): MaskAnswer;
}

/** Whether the text holds the mask at every place (`unknown`: read the entry). */
function textHoldsMasksAt(text: MaskText, places: readonly MaskPlace[]): MaskAnswer {
  let unknown = false;
  for (const place of places) {
    const answer = place.length === 1 ? text.maskAt(place[0]) : text.customMaskAt(place[1], place[2]);
    if (answer === 'no') return 'no';
    if (answer === 'unknown') unknown = true;
  }
  return unknown ? 'unknown' : 'mask';
}

/** The masks found in an earlier entry, offered for the next one of its type and mask count. */
interface MaskLayout {
  readonly places: readonly MaskPlace[];
  readonly pointers: readonly string[];
}

/** Layouts offered per type and mask count: the last few found (a type's connections mask one of a few sets of fields). */
const MASK_LAYOUTS_PER_KEY = 4;
/** Types and counts with layouts kept per finder: a bound for data where every line has a type or count of its own. */
const MASK_LAYOUT_KEYS_KEPT = 1_000;

/**
 * {@link maskedPointers} for a run of entries, most of which mask the same fields (every connection
 * of a type masks its credential): the masks found for an entry are offered to the next ones of the
 * same type whose text holds as many mask tokens (the last {@link MASK_LAYOUTS_PER_KEY} layouts
 * found), and taken when that entry holds the mask at each of those places. Sound: the places are as
 * many as the tokens that bound the entry's masks, so they are all its masks; and a mask in such a
 * place is found whatever the values around it (only its path decides, by the ignore rules). Else the
 * entry is walked, and its layout kept when every mask is in such a place. Without a count
 * (`undefined`: a `\u` escape in the text), always walked.
 *
 * A line's scanned text answers for an offered layout without parsing the line, when no ignore rule
 * removes values below the top level (the places are then read in the entry as it is): the same
 * answer as the parsed entry's, or `unknown` and the entry is read.
 */
export function createMaskFinder(
  options: CompareOptions,
): (source: MaskSource, masksInText: number | undefined) => readonly string[] {
  const layouts = new Map<string, MaskLayout[][]>();
  const textReadable = options.ignore.removesNothing;
  let keys = 0;
  return (source, masksInText) => {
    if (masksInText === undefined) return maskedPointers(source.entry(), options);
    if (masksInText === 0) return [];
    const ofType = layouts.get(source.type);
    const offered = ofType?.[masksInText];
    if (offered !== undefined) {
      const text = textReadable ? source.scan : undefined;
      let compared: Record<string, unknown> | undefined;
      for (const layout of offered) {
        const read = text === undefined ? 'unknown' : textHoldsMasksAt(text, layout.places);
        if (read === 'mask') return layout.pointers;
        if (read === 'no') continue;
        compared ??= options.ignore.removeFromEntry(source.entry());
        if (holdsMasksAt(compared, layout.places)) return layout.pointers;
      }
    }
    const entry = source.entry();
    const segments = maskedSegments(entry, options, masksInText);
    const pointers = segments.map(formatFound);
    if (segments.length !== masksInText) return pointers;
    const places: MaskPlace[] = [];
    for (const found of segments) if (isMaskPlace(found)) places.push(found);
    if (places.length !== segments.length) return pointers;
    if (offered !== undefined) {
      offered.unshift({ places, pointers });
      if (offered.length > MASK_LAYOUTS_PER_KEY) offered.pop();
    } else if (keys < MASK_LAYOUT_KEYS_KEPT) {
      keys++;
      const list: MaskLayout[][] = ofType ?? [];
      list[masksInText] = [{ places, pointers }];
      if (ofType === undefined) layouts.set(entry.type, list);
    }
    return pointers;
  };
}

function isMaskPlace(segments: readonly (string | number)[]): segments is MaskPlace {
  if (segments.length === 1) return typeof segments[0] === 'string';
  return (
    segments.length === 3 &&
    segments[0] === 'custom_fields' &&
    typeof segments[1] === 'string' &&
    typeof segments[2] === 'string'
  );
}

/** True when `a` (an entry as compared) holds the mask at every place, read as the walk reads it. */
function holdsMasksAt(a: Record<string, unknown>, places: readonly MaskPlace[]): boolean {
  for (const place of places) {
    if (place.length === 1) {
      if (!Object.hasOwn(a, place[0]) || a[place[0]] !== MASK) return false;
      continue;
    }
    const fields = Object.hasOwn(a, 'custom_fields') ? a.custom_fields : undefined;
    const field = customFieldAsCompared(fields, place[1]);
    if (!isPlainObject(field) || !Object.hasOwn(field, place[2]) || field[place[2]] !== MASK) return false;
  }
  return true;
}

/** `/<key>` of a top-level key, made once per key (for the first 1 000): every unchanged connection of a type lists the same few. */
const topLevelPointer = memoizeBounded((key) => formatPointer([key]), 1_000);

function formatFound(segments: readonly (string | number)[]): string {
  const key = segments[0];
  return segments.length === 1 && typeof key === 'string' ? topLevelPointer(key) : formatPointer(segments);
}

/** The walk of {@link Walk.compare} over a value and an equal copy of it: only masks are found. */
class MaskFinder {
  private readonly path: (string | number)[] = [];
  private readonly found: (string | number)[][] = [];

  constructor(
    private readonly ignore: IgnoreMatcher,
    /** Masks the entry may still hold: each one met counts down; at 0 there is none left to find. */
    private remaining: number,
  ) {}

  /** True when every mask the entry can hold has been met. */
  get done(): boolean {
    return this.remaining === 0;
  }

  /** A mask met that is not listed (its field is not compared). */
  passed(): void {
    this.remaining--;
  }

  /** The masks found, as reference tokens in the order {@link Walk} lists them. */
  segments(): (string | number)[][] {
    if (this.found.length > 1) this.found.sort(compareSegments);
    return this.found;
  }

  /**
   * {@link Walk.compare} at `segment` below the current path. `secret`: whether the place holds a
   * secret (an equal secret is equal: not walked); undefined for "by its name" ({@link isSecretFieldName}).
   * Only asked for an object or array: an equal secret leaf is no mask.
   */
  at(segment: string | number, value: unknown, secret?: boolean): void {
    if (this.remaining === 0) return;
    if (value === MASK) {
      this.remaining--;
      this.path.push(segment);
      if (!this.ignore.ignoresPath(this.path)) this.found.push([...this.path]);
      this.path.pop();
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    if (secret ?? (typeof segment === 'string' && isSecretFieldName(segment))) return;
    this.path.push(segment);
    if (!this.ignore.ignoresPath(this.path)) {
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) this.at(i, value[i], false);
      } else {
        // Keys from `Object.keys` are own: read directly.
        const record = value as Record<string, unknown>;
        for (const key of Object.keys(record)) this.at(key, record[key]);
      }
    }
    this.path.pop();
  }

  /** {@link Walk.compareCustomFields} of `fields` against an equal copy of them. */
  inCustomFields(fields: Record<string, unknown>): void {
    this.path.push('custom_fields');
    for (const name of Object.keys(fields)) {
      const field = fields[name];
      if (!isPlainObject(field)) {
        this.at(name, field, false);
        continue;
      }
      this.path.push(name);
      if (!this.ignore.ignoresPath(this.path)) {
        const encrypted = field.field_type === 'encrypted';
        for (const key of Object.keys(field)) {
          const value = field[key];
          // Whether a leaf is a secret does not matter: asked only of what may hold a mask.
          if (value === MASK || (typeof value === 'object' && value !== null))
            this.at(key, value, (encrypted && key === 'field_value') || isSecretFieldName(key));
        }
      }
      this.path.pop();
    }
    this.path.pop();
  }
}

/** Paths in the order of a depth-first walk with keys in code-unit order (neither is a prefix of the other). */
function compareSegments(x: readonly (string | number)[], y: readonly (string | number)[]): number {
  const length = Math.min(x.length, y.length);
  for (let i = 0; i < length; i++) {
    const a = x[i] as string | number;
    const b = y[i] as string | number;
    if (a === b) continue;
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    return compareNames(String(a), String(b));
  }
  return x.length - y.length;
}

type Segments = readonly (string | number)[];

/**
 * Whether a field compared between two sides is a secret by its name: unless each side present holds a
 * boolean or a number ({@link isSecretByName}: `is_credential: true` is a flag, not a secret).
 */
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
    if (a === b || this.ignore.ignoresPath(path)) return;
    if (secret) {
      if (!isDeepEqual(a, b)) this.change(path, redactSecretValue(a), redactSecretValue(b));
      return;
    }
    if (isPlainObject(a) && isPlainObject(b)) {
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

  /**
   * Set-like arrays: equal when equal as multisets. A difference is reported for the whole array, in
   * canonical order, since a position in a set means nothing.
   */
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
      if (!isPlainObject(fa) || !isPlainObject(fb)) {
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

  /**
   * The service masked the value on at least one side. A mask stands for a non-empty value, so
   * against an absent, null or empty value it is a known change; against anything else (another
   * mask included) the two cannot be compared.
   */
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

/** Keys of both objects, in code-unit order. */
function unionOfKeys(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const keys = Object.keys(a);
  for (const k of Object.keys(b)) if (!Object.hasOwn(a, k)) keys.push(k);
  return keys.sort(compareNames);
}

const NO_IGNORE_RULES = compileIgnoreRules([]);

/**
 * The fields in which `to` differs from `from`, by the very comparison of `diff` with no ignore rules
 * (what `import --on-conflict update` decides an update by, so that `diff`'s "changed" is exactly what
 * such an import updates). Masked fields are not differences.
 */
export function findChangedFields(
  from: Connection,
  to: Connection,
  secretFields: (type: string) => ReadonlySet<string> = () => NO_SECRETS,
): readonly FieldChange[] {
  return compareConnections(from, to, { ignore: NO_IGNORE_RULES, secretFields }).fields;
}
