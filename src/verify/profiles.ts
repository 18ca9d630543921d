/**
 * The scan profiles of a verify (snapshot format 2): each profile of the snapshot paired by name with
 * the environment's, `dataSourceList` compared by connection names (ids differ between environments).
 * Pure; the fields are compared as `diff` compares profiles (`src/diff/scan-profiles.ts`: the service's
 * fields ignored, sources by name), so verify and diff agree.
 */
import { compareNames } from '../connections/match.js';
import { compareProfileFields, toComparableProfile } from '../diff/scan-profiles.js';
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

function nameOf(side: ProfileSide): string {
  return String(side.profile.name);
}

/**
 * Verdicts of the profiles, in name order: `present`, `different` (fields named), `missing`, `extra`;
 * a one-time profile absent from the environment is `skipped` (the import leaves it out by design).
 * A name held twice on a side is compared once (the first), as connections are paired.
 */
export function verifyProfiles(
  snapshot: readonly ProfileSide[],
  environment: readonly ProfileSide[],
): VerifyItem[] {
  const live = new Map<string, ProfileSide>();
  for (const p of environment) if (!live.has(nameOf(p))) live.set(nameOf(p), p);
  const expected = new Map<string, ProfileSide>();
  for (const p of snapshot) if (!expected.has(nameOf(p))) expected.set(nameOf(p), p);
  const items: VerifyItem[] = [];
  for (const [name, p] of expected) {
    const other = live.get(name);
    if (other === undefined) {
      items.push(
        p.profile.isSingleRunScan === true
          ? { object: 'scan profile', name, state: 'skipped', note: ONE_TIME_NOTE }
          : { object: 'scan profile', name, state: 'missing' },
      );
      continue;
    }
    const fields = compareProfileFields(comparable(p), comparable(other));
    items.push(
      fields.length === 0
        ? { object: 'scan profile', name, state: 'present' }
        : { object: 'scan profile', name, state: 'different', fields },
    );
  }
  for (const name of live.keys())
    if (!expected.has(name)) items.push({ object: 'scan profile', name, state: 'extra' });
  return items.sort((a, b) => compareNames(a.name, b.name));
}
