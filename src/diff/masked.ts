/**
 * The masked values of a connection compared with an equal copy of itself (two byte-equal snapshot
 * lines, or a pair equal as JSON values): what {@link compareConnections} would list as uncomparable,
 * found without making the copy or comparing field by field. Pure (no fs, no HTTP, no logger).
 */
import { memoizeBounded } from '../bounded-memo.js';
import { compareNames } from '../connections/match.js';
import { isServerManagedField } from '../connections/server-managed.js';
import type { Connection } from '../model/connection.js';
import { isSecretFieldName, MASK } from '../secrets.js';
import type { CompareOptions, compareConnections } from './compare.js';
import type { IgnoreMatcher } from './ignore.js';
import { customFieldAsCompared, customFieldsAsCompared, SET_LIKE_FIELDS } from './normalize.js';
import { formatPointer } from './pointer.js';
import { isPlainObject } from './values.js';

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

/** What the mask finder reads masks of: a connection of a type (a snapshot line's, parsed once). */
export interface MaskSource {
  readonly type: string;
  /** The connection. */
  entry(): Connection;
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
 */
export function createMaskFinder(
  options: CompareOptions,
): (source: MaskSource, masksInText: number | undefined) => readonly string[] {
  const layouts = new Map<string, MaskLayout[][]>();
  let keys = 0;
  return (source, masksInText) => {
    if (masksInText === undefined) return maskedPointers(source.entry(), options);
    if (masksInText === 0) return [];
    const ofType = layouts.get(source.type);
    const offered = ofType?.[masksInText];
    if (offered !== undefined) {
      const compared = options.ignore.removeFromEntry(source.entry());
      for (const layout of offered) if (holdsMasksAt(compared, layout.places)) return layout.pointers;
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

/** The walk of `Walk.compare` (`compare.ts`) over a value and an equal copy of it: only masks are found. */
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

  /** The masks found, as reference tokens in the order `Walk` (`compare.ts`) lists them. */
  segments(): (string | number)[][] {
    if (this.found.length > 1) this.found.sort(compareSegments);
    return this.found;
  }

  /**
   * `Walk.compare` (`compare.ts`) at `segment` below the current path. `secret`: whether the place holds a
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

  /** `Walk.compareCustomFields` (`compare.ts`) of `fields` against an equal copy of them. */
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
