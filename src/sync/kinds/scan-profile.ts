/**
 * The scan profile kind: keyed by name; compared as `diff` compares (every field but the server's,
 * `dataSourceList` by connection name); its references, `dataSourceList`, name connections by id and
 * are placed on the ids the target has when sent; journaled as a snapshot holds it. Written through
 * `/scanProfiles` (created by POST, replaced and deleted by id; api-notes [code] and [guess]). There
 * is no look-up by name, so an in-doubt create is found in the list of every profile.
 */
import type { HttpClient } from '../../api/http.js';
import {
  createScanProfile,
  deleteScanProfile,
  listScanProfiles,
  updateScanProfile,
} from '../../api/scan-profiles.js';
import { compareProfileFields, toComparableProfile } from '../../diff/scan-profiles.js';
import type { FieldChange } from '../../diff/types.js';
import type { ScanProfile } from '../../model/scan-profile.js';
import { isProfileServerField, stripProfileServerFields } from '../../profiles/server-fields.js';
import { type KindWriter, StepRefused, type WriteTarget } from '../execute.js';

function idOf(target: WriteTarget): string {
  if (target.id === undefined) throw new StepRefused(`scan profile '${target.name}' has no id in the target`);
  return target.id;
}

/** The executor's writer of scan profiles, bound to `client`. */
export function scanProfileWriter(client: HttpClient): KindWriter {
  return {
    create: async (body) => (await createScanProfile(client, { ...body }))._id,
    update: async (target, body, signal) =>
      (await updateScanProfile(client, idOf(target), { ...body }, { signal })).kind === 'absent'
        ? 'absent'
        : 'applied',
    remove: async (target, signal) =>
      (await deleteScanProfile(client, idOf(target), { signal })).kind === 'absent' ? 'absent' : 'applied',
    lookup: async (name, signal) => {
      const found = (await listScanProfiles(client, { signal })).find((p) => p.name === name);
      const id = typeof found?._id === 'string' ? found._id : undefined;
      return found === undefined ? undefined : { id, createdAt: found.createdAt ?? found.created_at };
    },
  };
}

/**
 * A scan profile as a journal keeps it: as a snapshot does (`scanProfile` without server fields, and
 * the connection name of each `dataSourceList` element, so that undo can remap them to the ids the
 * target has then).
 */
export interface ProfileImage {
  readonly [key: string]: unknown;
  readonly scanProfile: Readonly<Record<string, unknown>>;
  readonly dataSourceNames: readonly (string | null)[];
}

/** The journal image of a target's profile; `nameOf` names the connection of an id. */
export function makeProfileImage(
  profile: ScanProfile,
  nameOf: (ref: string) => string | undefined,
): ProfileImage {
  return {
    scanProfile: stripProfileServerFields(profile),
    dataSourceNames: listOf(profile).map((ref) => nameOf(String(ref)) ?? null),
  };
}

/** A journal image of a profile ({@link ProfileImage}), or undefined when it is not one. */
export function readProfileImage(
  image: Readonly<Record<string, unknown>> | undefined,
): ProfileImage | undefined {
  const profile = image?.scanProfile;
  if (profile === null || typeof profile !== 'object' || Array.isArray(profile)) return undefined;
  const names = Array.isArray(image?.dataSourceNames) ? (image.dataSourceNames as (string | null)[]) : [];
  return { scanProfile: profile as Record<string, unknown>, dataSourceNames: names };
}

/**
 * The compared fields that differ between a wanted profile (its `dataSourceList` named by `names`) and
 * a target's profile (its ids named by `nameOf`): the comparison of `diff`.
 */
export function compareProfile(
  wanted: Readonly<Record<string, unknown>>,
  names: readonly (string | null)[],
  current: ScanProfile,
  nameOf: (ref: string) => string | undefined,
): FieldChange[] {
  return compareProfileFields(
    toComparableProfile(wanted, names, isProfileServerField),
    toComparableProfile(
      current,
      listOf(current).map((ref) => nameOf(String(ref)) ?? String(ref)),
      isProfileServerField,
    ),
  );
}

function listOf(profile: Readonly<Record<string, unknown>>): unknown[] {
  return Array.isArray(profile.dataSourceList) ? profile.dataSourceList : [];
}

/** One `dataSourceList` element to send: as it was, the connection it names, and in which form. */
export interface DataSourceRef<Name extends string | null = string | null> {
  readonly ref: unknown;
  /** The connection's name in the target (null when unknown: the element is sent as it was). */
  readonly targetName: Name;
  /** The element is the name itself (a source that lists data sources by name): sent as a name. */
  readonly asName: boolean;
}

/**
 * A `dataSourceList` placed on the connections the target has now (`idByName`; a name without an id
 * is sent as the name), and the elements naming a connection the target does not hold.
 */
export function placeDataSources(
  sources: readonly DataSourceRef[],
  idByName: ReadonlyMap<string, string | undefined>,
): { readonly list: unknown[]; readonly missing: readonly { index: number; name: string }[] } {
  const missing: { index: number; name: string }[] = [];
  const list = sources.map(({ ref, targetName: name, asName }, index) => {
    if (name === null) return ref;
    if (!idByName.has(name)) missing.push({ index, name });
    return asName ? name : (idByName.get(name) ?? name);
  });
  return { list, missing };
}

/**
 * `body` with its `dataSourceList` placed on the connections the target has now; a source naming a
 * connection the target does not hold refuses the step (nothing is sent), `why` ending its message.
 */
export function placeProfileBody(
  body: Readonly<Record<string, unknown>>,
  sources: readonly DataSourceRef[],
  idByName: ReadonlyMap<string, string | undefined>,
  why: string,
): Record<string, unknown> {
  const { list, missing } = placeDataSources(sources, idByName);
  const first = missing[0];
  if (first !== undefined) throw new StepRefused(`connection '${first.name}' is not in the target${why}`);
  return { ...body, dataSourceList: list };
}
