/**
 * The scan profile kind, keyed by name, written through `/scanProfiles` (created by POST, replaced and
 * deleted by id; api-notes [code] and [guess]): with no look-up by name, an in-doubt create is looked
 * for in the list of every profile. Its `dataSourceList` names connections, placed on the target's ids.
 */
import { connectionIdsByName } from '../../../api/connections.js';
import type { HttpClient } from '../../../api/http.js';
import {
  createScanProfile,
  deleteScanProfile,
  listScanProfiles,
  updateScanProfile,
} from '../../../api/scan-profiles.js';
import { compareProfileFields, toComparableProfile } from '../../../diff/scan-profiles.js';
import type { FieldChange } from '../../../diff/types.js';
import { countOf } from '../../../display-name.js';
import type { Problem } from '../../../errors.js';
import type { NameSelection } from '../../../importer/selection.js';
import type { ScanProfile, SnapshotScanProfile } from '../../../model/scan-profile.js';
import { isRecord } from '../../../own-property.js';
import { remapDataSourceList } from '../../../profiles/data-source-list.js';
import { isProfileServerField, stripProfileServerFields } from '../../../profiles/server-fields.js';
import { type KindWriter, StepRefused, type WriteTarget } from '../../execute.js';
import type { JournalOp } from '../../journal/records.js';
import type { WriteState } from '../../journal/replay.js';
import type { SyncKind } from '../../kind.js';
import { type OnConflict, planKind } from '../../plan.js';
import {
  buildProfileReport,
  countProfileOutcomes,
  countProfileWrites,
  formatProfileSummary,
  isProfileWrite,
  type ProfileOutcome,
  type ProfileRun,
  runProfileImport,
  startProfileImport,
} from './import.js';
import { describeProfileStep, planJson, planMarkdown } from './render.js';
import { planProfileUndo } from './undo.js';

function idOf({ targetId, targetName }: WriteTarget): string {
  if (targetId === undefined) throw new StepRefused(`scan profile '${targetName}' has no id in the target`);
  return targetId;
}

function scanProfileWriter(client: HttpClient): KindWriter {
  return {
    create: async (body) => (await createScanProfile(client, { ...body }))._id,
    update: async (target, body) => updateScanProfile(client, idOf(target), { ...body }),
    remove: async (target) => deleteScanProfile(client, idOf(target)),
    lookup: async (name, signal) => {
      const found = (await listScanProfiles(client, { signal })).find((p) => p.name === name);
      const id = typeof found?._id === 'string' ? found._id : undefined;
      return found === undefined ? undefined : { id, createdAt: found.createdAt ?? found.created_at };
    },
  };
}

/** A scan profile as a journal keeps it: as a snapshot does, so undo can remap its `dataSourceList`. */
export interface ProfileImage {
  readonly [key: string]: unknown;
  readonly scanProfile: Readonly<Record<string, unknown>>;
  readonly dataSourceNames: readonly (string | null)[];
}

function makeProfileImage(profile: ScanProfile, nameOf: (ref: string) => string | undefined): ProfileImage {
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
  if (!isRecord(profile)) return undefined;
  const names = Array.isArray(image?.dataSourceNames) ? (image.dataSourceNames as (string | null)[]) : [];
  return { scanProfile: profile, dataSourceNames: names };
}

/** The fields that differ between a wanted profile and a target's, compared as `diff` compares. */
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
  /** Null when unknown: the element is sent as it was. */
  readonly targetName: Name;
  /** The element is the connection's name (a source that lists data sources by name). */
  readonly asName: boolean;
}

/** A `dataSourceList` placed on the target's ids now, and the elements naming a connection it lacks. */
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

/** `body` placed as {@link placeDataSources} does; a connection the target lacks refuses the step. */
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

/** What the journal says about one profile (by its snapshot name; a delete by its target name). */
export type ProfileJournalState = Pick<
  WriteState,
  'op' | 'state' | 'targetName' | 'targetId' | 'attempt' | 'intentAt'
>;

interface ProfileStepBase {
  /** The snapshot's name (a delete: the target's). */
  readonly name: string;
}

/** A step that sends a request. */
export type ProfileSendStep =
  | (ProfileStepBase & {
      readonly kind: 'create';
      /** The name POSTed (`<name> (2)` for `--on-conflict rename`). */
      readonly targetName: string;
      readonly profile: ScanProfile;
      readonly dataSources: readonly DataSourceRef<string>[];
      /** 2 or more: resent after an in-doubt intent the target's list did not show. */
      readonly attempt: number;
    })
  | (ProfileStepBase & {
      readonly kind: 'update';
      readonly targetName: string;
      readonly targetId: string;
      readonly profile: ScanProfile;
      readonly dataSources: readonly DataSourceRef<string>[];
      readonly fields: readonly FieldChange[];
      readonly attempt: number;
      readonly before: ProfileImage;
    })
  | (ProfileStepBase & {
      readonly kind: 'delete';
      readonly targetName: string;
      readonly targetId: string;
      readonly attempt: number;
      readonly before: ProfileImage;
    });

export type ProfileStep =
  | ProfileSendStep
  | (ProfileStepBase & {
      readonly kind: 'done';
      readonly action: JournalOp;
      readonly targetName: string;
      readonly targetId: string | undefined;
      /** `lookup`: an in-doubt create found applied now. */
      readonly via: 'journal' | 'lookup';
      readonly intentAt?: string | undefined;
    })
  | (ProfileStepBase & { readonly kind: 'exists' | 'unchanged'; readonly targetId: string | undefined })
  | (ProfileStepBase & { readonly kind: 'skipped'; readonly reason: string })
  | (ProfileStepBase & { readonly kind: 'conflict'; readonly targetId: string | undefined })
  | (ProfileStepBase & { readonly kind: 'blocked'; readonly problems: readonly Problem[] });

export interface ProfilePlan {
  /** Snapshot profiles in name order, then the deletes. */
  readonly steps: readonly ProfileStep[];
  /** Absent: the snapshot does not include scan profiles. */
  readonly included?: true;
  /** Conflicts (`--on-conflict fail`) and profiles naming absent connections. */
  readonly problems: readonly Problem[];
}

export interface ProfilePlanInput {
  readonly profiles: readonly SnapshotScanProfile[];
  /** False: the snapshot's header does not include scan profiles; nothing is planned. */
  readonly included: boolean;
  readonly targetProfiles: readonly ScanProfile[];
  /** Read before the connection phase. */
  readonly targetConnections: readonly { readonly name: string; readonly _id?: string | undefined }[];
  /** Connections this run creates or created: snapshot name -> name in the target. */
  readonly createdConnections: ReadonlyMap<string, string>;
  readonly journal: ReadonlyMap<string, ProfileJournalState>;
  readonly onConflict: OnConflict;
  /** What earlier runs created under another name (`--on-conflict rename`), by the snapshot's name. */
  readonly renamed?: ReadonlyMap<string, string>;
  readonly prune: boolean;
  readonly allowRun: boolean;
  /** Undefined = all. */
  readonly only: NameSelection | undefined;
}

const SINGLE_RUN_REASON =
  'one-time profile (isSingleRunScan): creating it starts a scan at once; pass --allow-run to create it';

interface WantedProfile {
  readonly entry: SnapshotScanProfile;
  readonly dataSources: readonly DataSourceRef<string>[];
  readonly problems: readonly Problem[] | undefined;
}

/**
 * `import`'s scan profile plan, after the connection plan, by `sync/plan.ts`'s rules and these: an update the
 * run being finished made -> `done`; a one-time profile (`isSingleRunScan`) without `--allow-run` ->
 * `skipped` (creating it starts a scan); a `dataSourceList` naming a connection not in the target nor created
 * by the run (remapped by name, renames followed) -> `blocked`; a create in doubt in the target's list now ->
 * `done`, else re-sent under its name. Blocked profiles and conflicts are pre-flight problems (exit 3).
 */
export function planProfiles(input: ProfilePlanInput): ProfilePlan {
  if (!input.included) return { steps: [], problems: [] };
  const connectionByName = new Map(input.targetConnections.map((c) => [c.name, c]));
  const connectionNameById = new Map<string, string>();
  for (const c of input.targetConnections) if (c._id !== undefined) connectionNameById.set(c._id, c.name);
  const nameOf = (ref: string) =>
    connectionNameById.get(ref) ?? (connectionByName.has(ref) ? ref : undefined);
  const targetNameOf = (n: string) =>
    input.createdConnections.get(n) ?? (connectionByName.has(n) ? n : undefined);
  const attemptAfter = (written: ProfileJournalState | undefined) =>
    written?.state === 'in-doubt' ? written.attempt + 1 : 1;

  const steps = planKind<WantedProfile, ScanProfile, ProfileJournalState, ProfileStep>(
    {
      nameOf: (wanted) => wanted.entry.scanProfile.name,
      resumes: ['create', 'update'],
      gate: ({ entry, problems }) => {
        const name = entry.scanProfile.name;
        if (entry.scanProfile.isSingleRunScan === true && !input.allowRun)
          return { kind: 'skipped', name, reason: SINGLE_RUN_REASON };
        return problems === undefined ? undefined : { kind: 'blocked', name, problems };
      },
      step: ({ entry, dataSources }, { kind, targetName, current, written }) => {
        const name = entry.scanProfile.name;
        const targetId = current?._id;
        const attempt = attemptAfter(written);
        if (kind === 'done' && written !== undefined)
          return { kind, name, action: written.op, targetName, targetId: written.targetId, via: 'journal' };
        if (kind === 'in-doubt' && current !== undefined) {
          const intentAt = written?.intentAt;
          return { kind: 'done', name, action: 'create', targetName, targetId, via: 'lookup', intentAt };
        }
        if (kind === 'exists' || kind === 'conflict') return { kind, name, targetId };
        const profile = entry.scanProfile;
        if (kind !== 'update' || current === undefined)
          return { kind: 'create', name, targetName, profile, dataSources, attempt };
        const names = dataSources.map((d) => d.targetName);
        const fields = compareProfile(profile, names, current, nameOf);
        if (fields.length === 0 || targetId === undefined) return { kind: 'unchanged', name, targetId };
        const before = makeProfileImage(current, nameOf);
        return { kind, name, targetName, targetId, profile, dataSources, fields, attempt, before };
      },
      remove: (p, written) =>
        p._id === undefined
          ? undefined
          : {
              kind: 'delete',
              name: p.name,
              targetName: p.name,
              targetId: p._id,
              attempt: attemptAfter(written),
              before: makeProfileImage(p, nameOf),
            },
      removed: (name, { targetName, targetId }) => ({
        kind: 'done',
        name,
        action: 'delete',
        targetName,
        targetId,
        via: 'journal',
      }),
    },
    {
      desired: input.profiles.map((entry) => resolveDataSources(entry, targetNameOf)),
      actual: input.targetProfiles.filter((p) => typeof p.name === 'string'),
      journal: input.journal,
      onConflict: input.onConflict,
      ...(input.renamed ? { renamed: input.renamed } : {}),
      only: input.only,
      prune: input.prune,
    },
  );
  const problems = steps.flatMap((step): readonly Problem[] => {
    if (step.kind === 'blocked') return step.problems;
    if (step.kind !== 'conflict') return [];
    const message = `scan profile '${step.name}' already exists in the target (--on-conflict fail)`;
    return [{ entry: step.name, message }];
  });
  return { steps, problems, included: true };
}

function resolveDataSources(
  entry: SnapshotScanProfile,
  targetNameOf: (name: string) => string | undefined,
): WantedProfile {
  const remapped = remapDataSourceList(entry.scanProfile.dataSourceList, {
    recordedNames: entry.dataSourceNames,
    targetNameOf,
  });
  if (!remapped.ok) {
    const problems = remapped.problems.map((p) => ({
      entry: entry.scanProfile.name,
      path: `/dataSourceList/${p.index}`,
      message: p.message,
      ...(p.causedBy === undefined ? {} : { causedBy: p.causedBy }),
    }));
    return { entry, dataSources: [], problems };
  }
  const dataSources = remapped.elements.map((e) => ({
    ref: e.ref,
    targetName: e.targetName,
    asName: e.form === 'name',
  }));
  return { entry, dataSources, problems: undefined };
}

/** The scan profile kind, as the engine sees it. */
export const scanProfileKind: SyncKind<ProfilePlan, ProfileRun> = {
  object: 'scan-profile',
  label: 'scan profile',
  writer: scanProfileWriter,

  // import
  startImport: startProfileImport,
  planKey: 'profilePlan',
  planText: (plan) => plan.steps.map(describeProfileStep),
  planJson,
  planMarkdown,
  runImport: runProfileImport,
  report: (plan, outcomes = new Map()) => {
    const profileReport = buildProfileReport(plan, outcomes as ReadonlyMap<number, ProfileOutcome>);
    return {
      profileReport,
      profileCounts: countProfileOutcomes(profileReport),
      profilesIncluded: plan.included === true,
    };
  },
  *reportRecords({ profileReport }, run) {
    for (const l of profileReport) yield { ...l, run };
  },
  summary: (r) => (r.profilesIncluded ? formatProfileSummary(r.profileReport) : undefined),
  runJson: ({ profileReport, profileCounts, profilesIncluded }) => ({
    tail: profilesIncluded
      ? {
          scanProfiles: {
            counts: profileCounts,
            failures: profileReport.filter((l) => l.outcome === 'failed'),
            skipped: profileReport.filter((l) => l.outcome === 'skipped'),
          },
        }
      : {},
  }),
  failed: ({ profileCounts: { failed } }) => (failed > 0 ? countOf(failed, 'scan profile') : undefined),
  changes: countProfileWrites,
  writes: (plan) => plan.steps.filter(isProfileWrite).length,
  preflight: (plan, max, before) => {
    const writes = countProfileWrites(plan);
    if (max === undefined || before > max || before + writes <= max) return plan.problems;
    const message = `${before} connection and ${writes} scan profile changes, more than --max-changes ${max}; raise --max-changes or narrow with --only`;
    return [...plan.problems, { message }];
  },

  // undo
  current: (client, signal) => listScanProfiles(client, { signal }),
  undo: planProfileUndo,
  references: 'connection',
  oneAtATime: true,
  // A connection this undo created again has its id only once its phase is done.
  placeUndoBodies: async (client, signal) => {
    const ids = await connectionIdsByName(client, signal);
    const why = ', so the profile cannot name it';
    return (step) =>
      step.refs === undefined
        ? step.body
        : placeProfileBody(step.body, step.refs as DataSourceRef[], ids, why);
  },
  beforeOptional: true,
  runsKey: 'scanProfiles',
};
