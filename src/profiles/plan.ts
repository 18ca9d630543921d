import type { ConnectionKey } from '../api/types.js';
import { compareNames } from '../connections/match.js';
import type { Problem } from '../errors.js';
import {
  type DataSourceListContext,
  type DataSourceProblem,
  type RemappedDataSource,
  remapDataSourceList,
} from './data-source-list.js';
import { stripProfileServerFields } from './server-fields.js';

/** One entry of an import's id map (contract section 3). */
export interface IdMapEntry {
  readonly name: string;
  /** Absent when the import did not learn it: the name is used. */
  readonly targetId?: string | undefined;
}

export type IdMap = ReadonlyMap<string, IdMapEntry>;

/** How one `dataSourceList` entry was mapped. */
export interface DataSourceMapping {
  readonly from: string;
  readonly to: string;
  readonly name: string;
  /** `name`: source id -> name -> target id; `name-passthrough`: a name stays one. */
  readonly via: 'id-map' | 'name' | 'name-passthrough';
}

export interface SourceProfile {
  readonly sourceId: string;
  readonly profile: Readonly<Record<string, unknown>>;
}

/** One step per source profile: `--dry-run` prints the plan the real run executes. */
export type ProfileCloneStep = {
  readonly sourceId: string;
  readonly name: string;
  readonly singleRun: boolean;
} & (
  | {
      readonly kind: 'create';
      readonly body: Record<string, unknown>;
      readonly dataSources: readonly DataSourceMapping[];
    }
  /** A profile of this name is already in the target: left alone, not an error. */
  | { readonly kind: 'exists'; readonly targetId: string | undefined }
  | { readonly kind: 'blocked'; readonly problems: readonly Problem[] }
);

/** Nothing may be created unless `problems` is empty. */
export interface ProfileClonePlan {
  readonly steps: readonly ProfileCloneStep[];
  readonly problems: readonly Problem[];
  /** Names (or unknown ids) of connections missing in the target, sorted. */
  readonly missingConnections: readonly string[];
}

export interface ProfileCloneInput {
  readonly profiles: readonly SourceProfile[];
  /** May be empty when every id is in the id map. */
  readonly sourceConnections: readonly ConnectionKey[];
  readonly targetConnections: readonly ConnectionKey[];
  readonly idMap?: IdMap | undefined;
  readonly allowRun: boolean;
  /** The target's profiles by name (-> `_id`). */
  readonly targetProfiles?: ReadonlyMap<string, string | undefined>;
}

const OBJECT_ID = /^[0-9a-f]{24}$/i;

/** True for a 24-hex id, the service's `_id` form. */
export function isObjectId(value: string): boolean {
  return OBJECT_ID.test(value);
}

/** Whether some `dataSourceList` id is not in the id map: only then is the source's list needed. */
export function needsSourceConnections(
  profiles: readonly SourceProfile[],
  idMap: IdMap | undefined,
): boolean {
  return profiles.some(
    (p) => readDataSourceList(p.profile)?.some((ref) => isObjectId(ref) && !idMap?.has(ref)) ?? false,
  );
}

function readDataSourceList(profile: Readonly<Record<string, unknown>>): string[] | undefined {
  const list = profile.dataSourceList;
  return Array.isArray(list) && list.every((x) => typeof x === 'string') ? (list as string[]) : undefined;
}

/**
 * An id through the id map's name, else the source connection's; an id map's target id is followed to its
 * name in the target (an import may have renamed it); a stale target id falls back to the name.
 */
function cloneContext(input: ProfileCloneInput): DataSourceListContext {
  const sourceById = new Map(input.sourceConnections.map((c) => [c._id, c]));
  const targetById = new Map(input.targetConnections.map((c) => [c._id, c]));
  const targetByName = new Map(input.targetConnections.map((c) => [c.name, c]));
  const followed = new Map<string, string>();
  for (const entry of input.idMap?.values() ?? []) {
    const target = entry.targetId === undefined ? undefined : targetById.get(entry.targetId);
    if (target !== undefined) followed.set(entry.name, target.name);
  }
  return {
    nameOfSourceId: (id) => input.idMap?.get(id)?.name ?? sourceById.get(id)?.name,
    targetNameOf: (name) => followed.get(name) ?? (targetByName.has(name) ? name : undefined),
    targetIdOf: (name) => targetByName.get(name)?._id,
  };
}

function toMapping(element: RemappedDataSource, idMap: IdMap | undefined): DataSourceMapping {
  const { ref, to, sourceName } = element;
  const via =
    element.form === 'name' ? 'name-passthrough' : idMap?.get(ref)?.targetId === to ? 'id-map' : 'name';
  return { from: ref, to, name: sourceName, via };
}

function describeMissing(problem: DataSourceProblem): string {
  if (problem.causedBy !== undefined)
    return `connection '${problem.causedBy}' (source id ${problem.ref}) is not in the target`;
  return isObjectId(problem.ref)
    ? `data source id ${problem.ref} is neither a source connection nor in the id map`
    : `connection '${problem.ref}' is not in the target`;
}

/** Plan a clone (pure): map every data source, block one-time profiles without `allowRun`. */
export function planProfileClone(input: ProfileCloneInput): ProfileClonePlan {
  const context = cloneContext(input);
  const steps: ProfileCloneStep[] = [];
  const missing = new Set<string>();
  const seenNames = new Map<string, string>();

  for (const { sourceId, profile } of input.profiles) {
    const name = typeof profile.name === 'string' ? profile.name : sourceId;
    const singleRun = profile.isSingleRunScan === true;
    if (input.targetProfiles?.has(name) === true && !seenNames.has(name)) {
      seenNames.set(name, sourceId);
      steps.push({ kind: 'exists', sourceId, name, singleRun, targetId: input.targetProfiles.get(name) });
      continue;
    }
    const problems: Problem[] = [];
    const list = readDataSourceList(profile);
    const remapped = list === undefined ? undefined : remapDataSourceList(list, context);
    if (remapped === undefined) {
      problems.push({
        entry: name,
        path: '/dataSourceList',
        message: 'is not an array of strings in the source profile',
      });
    }
    for (const problem of remapped?.ok === false ? remapped.problems : []) {
      missing.add(problem.causedBy ?? problem.ref);
      problems.push({
        entry: name,
        path: `/dataSourceList/${problem.index}`,
        message: describeMissing(problem),
      });
    }
    if (singleRun && !input.allowRun) {
      problems.push({
        entry: name,
        path: '/isSingleRunScan',
        message: 'is a one-time profile: creating it starts a scan at once (pass --allow-run to allow that)',
      });
    }
    const other = seenNames.get(name);
    if (other !== undefined) {
      problems.push({
        entry: name,
        path: '/name',
        message: `is also the name of source profile ${other}; names must differ`,
      });
    } else {
      seenNames.set(name, sourceId);
    }

    if (problems.length > 0) {
      steps.push({ kind: 'blocked', sourceId, name, singleRun, problems });
    } else {
      const dataSources = remapped?.ok ? remapped.elements.map((e) => toMapping(e, input.idMap)) : [];
      const body = { ...stripProfileServerFields(profile), dataSourceList: dataSources.map((m) => m.to) };
      steps.push({ kind: 'create', sourceId, name, singleRun, body, dataSources });
    }
  }

  return {
    steps,
    problems: steps.flatMap((s) => (s.kind === 'blocked' ? s.problems : [])),
    missingConnections: [...missing].sort(compareNames),
  };
}
