import type { ScanProfilesDiff } from './scan-profiles.js';

/**
 * The shape of a diff, exactly as `diff --format json` prints it (contract section 3, "Diff result").
 * Plain data, so that `JSON.stringify` of a {@link DiffResult} is the output; `uncomparable` may be a
 * compact list (`src/diff/masked-fields.ts`) whose `toJSON` is the array of its items.
 */

/** One field that differs. A side on which the field is absent has no `from` (or `to`) key. */
export interface FieldChange {
  /** JSON pointer (RFC 6901) into the compared document; see docs/diff.md for set-like arrays. */
  readonly path: string;
  readonly from?: unknown;
  readonly to?: unknown;
}

/** A connection (or a scan profile) present on both sides whose compared fields differ. */
export interface ChangedConnection {
  readonly name: string;
  /** In document order: keys in code-unit order at each level, array elements by index. */
  readonly fields: readonly FieldChange[];
}

/** A field that could not be compared because the service masked it on at least one side. */
export interface UncomparableField {
  readonly name: string;
  readonly path: string;
}

/**
 * The fields a diff could not compare, in name order: read by iterating (an array is one); `length`
 * is how many.
 */
export interface UncomparableFields extends Iterable<UncomparableField> {
  readonly length: number;
}

/** What differs between `from` and `to`. Names in code-unit order. */
export interface DiffResult {
  /** Only in `from` (what an import of `from` into `to` would create). */
  readonly added: readonly string[];
  /** Only in `to`. */
  readonly removed: readonly string[];
  readonly changed: readonly ChangedConnection[];
  /** Connections on both sides with no known difference (masked fields may still be listed in `uncomparable`). */
  readonly unchanged: number;
  readonly uncomparable: UncomparableFields;
  /** Scan profiles, by name (present when either side has profiles). */
  readonly scanProfiles?: ScanProfilesDiff;
}

export interface DiffOptions {
  /**
   * Fields to ignore besides the server-managed ones: a top-level field name (`description`) or a
   * JSON pointer (`/custom_fields`, `/owners_v2/0/email`, `/owners_v2/*\/origin`). Default none.
   */
  readonly ignoreFields?: readonly string[];
  /** Credential fields of a connection type (template `x-secret`). Default: none beyond the name floor. */
  readonly secretFields?: (type: string) => ReadonlySet<string>;
}

/** True when a diff found something to report with exit 1 (masked-only fields are not differences). */
export function hasDifferences(result: DiffResult): boolean {
  const p = result.scanProfiles;
  const profiles = p !== undefined && (p.added.length > 0 || p.removed.length > 0 || p.changed.length > 0);
  return result.added.length > 0 || result.removed.length > 0 || result.changed.length > 0 || profiles;
}
