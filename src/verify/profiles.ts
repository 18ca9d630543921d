import { compareNames } from '../connections/match.js';
import { diffScanProfiles, toComparableProfile } from '../diff/scan-profiles.js';
import { isProfileServerField } from '../profiles/server-fields.js';
import type { VerifyItem } from './verdict.js';

/** A profile on one side: its fields, and for each `dataSourceList` element its connection name. */
export interface ProfileSide {
  readonly profile: Readonly<Record<string, unknown>>;
  /** Same length and order as `profile.dataSourceList`; null where the name is unknown. */
  readonly dataSourceNames: readonly (string | null)[];
}

/** Why a one-time profile is absent after a restore (contract: import skips it without --allow-run). */
export const ONE_TIME_NOTE =
  'one-time profile (isSingleRunScan): import skips it by design (it would start a scan) unless --allow-run';

const comparable = (side: ProfileSide) =>
  toComparableProfile(side.profile, side.dataSourceNames, isProfileServerField);

/** Profile verdicts by name, from diff's comparison (so both agree); a missing one-time one is `skipped`. */
export function verifyProfiles(
  snapshot: readonly ProfileSide[],
  environment: readonly ProfileSide[],
): VerifyItem[] {
  const diff = diffScanProfiles(snapshot.map(comparable), environment.map(comparable));
  const missing = new Set(diff.added);
  const different = new Map(diff.changed.map((c) => [c.name, c.fields]));
  const oneTime = new Set(
    snapshot.filter((p) => p.profile.isSingleRunScan === true).map((p) => String(p.profile.name)),
  );
  const items = [...new Set(snapshot.map((p) => String(p.profile.name)))].map((name): VerifyItem => {
    const object = 'scan profile';
    if (missing.has(name))
      return oneTime.has(name)
        ? { object, name, state: 'skipped', note: ONE_TIME_NOTE }
        : { object, name, state: 'missing' };
    const fields = different.get(name);
    return fields === undefined
      ? { object, name, state: 'present' }
      : { object, name, state: 'different', fields };
  });
  items.push(...diff.removed.map((name): VerifyItem => ({ object: 'scan profile', name, state: 'extra' })));
  return items.sort((a, b) => compareNames(a.name, b.name));
}
