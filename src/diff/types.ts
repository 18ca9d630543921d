import type { ScanProfilesDiff } from './scan-profiles.js';

/** One field that differs; no `from` (or `to`) key where it is absent. */
export interface FieldChange {
  /** JSON pointer (RFC 6901) into the compared document; see docs/diff.md for set-like arrays. */
  readonly path: string;
  readonly from?: unknown;
  readonly to?: unknown;
}

/** A connection (or a scan profile) on both sides whose compared fields differ. */
export interface ChangedConnection {
  readonly name: string;
  /** In document order: keys in code-unit order at each level, array elements by index. */
  readonly fields: readonly FieldChange[];
}

/** A field the service masked on at least one side. */
export interface UncomparableField {
  readonly name: string;
  readonly path: string;
}

/** Uncomparable fields in name order: an array, or the compact `MaskedFields`. */
export interface UncomparableFields extends Iterable<UncomparableField> {
  readonly length: number;
}

/** `from` vs `to`, names in code-unit order; its JSON is `diff --format json` (contract 3, "Diff result"). */
export interface DiffResult {
  /** Only in `from` (what an import of `from` into `to` would create). */
  readonly added: readonly string[];
  /** Only in `to`. */
  readonly removed: readonly string[];
  readonly changed: readonly ChangedConnection[];
  /** On both sides with no known difference (masked fields may be in `uncomparable`). */
  readonly unchanged: number;
  readonly uncomparable: UncomparableFields;
  /** Present when either side has scan profiles. */
  readonly scanProfiles?: ScanProfilesDiff;
}

/** What a diff ignores and masks. */
export interface DiffOptions {
  /** Besides the server-managed fields: field names or JSON pointers (ignore.ts). Default none. */
  readonly ignoreFields?: readonly string[];
  /** Template `x-secret` fields of a type; default none beyond the name floor. */
  readonly secretFields?: (type: string) => ReadonlySet<string>;
}

/** True when a diff found something to report with exit 1 (masked-only fields are not differences). */
export function hasDifferences(result: DiffResult): boolean {
  const p = result.scanProfiles;
  const profiles = p !== undefined && (p.added.length > 0 || p.removed.length > 0 || p.changed.length > 0);
  return result.added.length > 0 || result.removed.length > 0 || result.changed.length > 0 || profiles;
}
