/** Scan profiles compared by name, `dataSourceList` by connection names (ids differ between environments). */
import { compareNames } from '../connections/match.js';
import { isRecord } from '../own-property.js';
import { formatPointer } from './pointer.js';
import type { ChangedConnection, FieldChange } from './types.js';
import { isDeepEqual, redactDeep } from './values.js';

/** A profile ready to compare: dataSourceList as names. */
export interface ComparableProfile {
  readonly name: string;
  readonly fields: Readonly<Record<string, unknown>>;
}

/** The `scanProfiles` part of a diff result (contract section 3). */
export interface ScanProfilesDiff {
  readonly added: readonly string[];
  readonly removed: readonly string[];
  readonly changed: readonly ChangedConnection[];
}

/** `profile` without the `isIgnored` fields, `dataSourceList[i]` as `names[i]` where known. */
export function toComparableProfile(
  profile: Readonly<Record<string, unknown>>,
  names: readonly (string | null)[],
  isIgnored: (field: string) => boolean,
): ComparableProfile {
  const fields: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(profile)) {
    if (isIgnored(key)) continue;
    if (key === 'dataSourceList' && Array.isArray(value)) {
      fields[key] = value.map((ref, i) => names[i] ?? ref);
    } else {
      fields[key] = value;
    }
  }
  return { name: String(profile.name), fields };
}

/** A `dataSourceList`'s names by `_id`; else null, compared as is (bodies often list names: api-notes). */
export function nameDataSources(
  profile: Readonly<Record<string, unknown>>,
  nameById: ReadonlyMap<string, string>,
): (string | null)[] {
  const list = Array.isArray(profile.dataSourceList) ? (profile.dataSourceList as unknown[]) : [];
  return list.map((ref) => (typeof ref === 'string' ? (nameById.get(ref) ?? null) : null));
}

/** The changed fields of two compared profiles; a nested object (schedule) key by key. */
export function compareProfileFields(a: ComparableProfile, b: ComparableProfile): FieldChange[] {
  const keys = [...new Set([...Object.keys(a.fields), ...Object.keys(b.fields)])].sort(compareNames);
  const out: FieldChange[] = [];
  for (const key of keys) {
    const from = a.fields[key];
    const to = b.fields[key];
    if (isDeepEqual(from, to)) continue;
    if (isRecord(from) && isRecord(to)) {
      for (const sub of [...new Set([...Object.keys(from), ...Object.keys(to)])].sort(compareNames)) {
        if (isDeepEqual(from[sub], to[sub])) continue;
        out.push(change(formatPointer([key, sub]), from[sub], to[sub]));
      }
    } else {
      out.push(change(formatPointer([key]), from, to));
    }
  }
  return out;
}

function change(path: string, from: unknown, to: unknown): FieldChange {
  return {
    path,
    ...(from === undefined ? {} : { from: redactDeep(from) }),
    ...(to === undefined ? {} : { to: redactDeep(to) }),
  };
}

/** Compare two sides' profiles by name: added (only in `from`), removed (only in `to`), changed. */
export function diffScanProfiles(
  from: readonly ComparableProfile[],
  to: readonly ComparableProfile[],
): ScanProfilesDiff {
  const target = new Map(to.map((p) => [p.name, p]));
  const source = new Set(from.map((p) => p.name));
  const added: string[] = [];
  const changed: ChangedConnection[] = [];
  for (const p of [...from].sort((x, y) => compareNames(x.name, y.name))) {
    const other = target.get(p.name);
    if (other === undefined) {
      added.push(p.name);
      continue;
    }
    const fields = compareProfileFields(p, other);
    if (fields.length > 0) changed.push({ name: p.name, fields });
  }
  const removed = to
    .map((p) => p.name)
    .filter((n) => !source.has(n))
    .sort(compareNames);
  return { added: [...new Set(added)], removed: [...new Set(removed)], changed };
}
