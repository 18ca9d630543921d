/**
 * The scan profile plan of `import` (snapshot format 2): after the connections, the snapshot's scan
 * profiles are made to match in the target, one request at a time, through the executor.
 *
 * Plan (pure, {@link planProfiles}), per snapshot profile, in this order of precedence:
 * 1. `--only` given and the profile not named in it -> left out;
 * 2. the run being finished created / updated it before it was interrupted, and the target still holds
 *    it -> `done`;
 * 3. one-time (`isSingleRunScan: true`) without `--allow-run` -> `skipped` (creating it starts a scan);
 * 4. a `dataSourceList` element whose connection is neither in the target nor created by this run
 *    -> `blocked` (a pre-flight problem: the run is refused, exit 3);
 * 5. the journal holds an intent without an outcome (in doubt): the target's list, read now, is asked
 *    by the name sent: found -> `done` (via look-up), else sent again;
 * 6. its name exists in the target: `skip` -> `exists`; `fail` -> `conflict` (pre-flight problem);
 *    `update` -> `update` when a compared field differs (the comparison of `diff`), else `unchanged`;
 *    `rename` -> `create` as `<name> (2)` (or the next free `(n)`);
 * 7. otherwise -> `create`.
 * With `prune` (and a snapshot that includes profiles), every profile of the target the snapshot does not
 * hold (within `--only`) -> `delete`.
 *
 * `dataSourceList` is remapped by connection name: element i names the connection
 * `dataSourceNames[i]` of the snapshot (an element with no recorded name is taken as a name when a
 * connection of that name exists); a connection this run renamed is followed to its new name; the id
 * sent is the target's id of that name, read after the connection phase (a source that listed data
 * sources by name gets names again). Order is kept.
 *
 * The steps run one at a time (a one-time profile starts a scan, so nothing is sent in parallel).
 * Creating a scheduled profile starts no scan.
 */

import { compareNames } from '../connections/match.js';
import { compareProfileFields, toComparableProfile } from '../diff/scan-profiles.js';
import type { FieldChange } from '../diff/types.js';
import type { Problem } from '../errors.js';
import type { ScanProfile, SnapshotScanProfile } from '../model/scan-profile.js';
import { remapDataSourceList } from '../profiles/data-source-list.js';
import { isProfileServerField, stripProfileServerFields } from '../profiles/server-fields.js';
import type { JournalOp } from '../sync/journal/records.js';
import type { RunState } from '../sync/journal/replay.js';
import type { NameSelection } from './selection.js';

/** What to do with a profile whose name exists in the target (`--on-conflict`). */
export type ProfileOnConflict = 'skip' | 'fail' | 'rename' | 'update';

/** What the journal says about one profile (by its snapshot name; a delete by its target name). */
export type ProfileJournalState =
  | {
      readonly state: 'done';
      readonly action: JournalOp;
      readonly targetName: string;
      readonly targetId: string | undefined;
    }
  | { readonly state: 'failed'; readonly action: JournalOp; readonly targetName: string }
  | {
      readonly state: 'in-doubt';
      readonly action: JournalOp;
      readonly targetName: string;
      readonly targetId: string | undefined;
      readonly attempt: number;
    };

/** The states of a run's scan profile writes, by profile name (none for a new run). */
export function profileStates(run: RunState | undefined): ReadonlyMap<string, ProfileJournalState> {
  const states = new Map<string, ProfileJournalState>();
  for (const w of run?.writes.values() ?? []) {
    if (w.object !== 'scan-profile') continue;
    const base = { action: w.op, targetName: w.targetName };
    if (w.state === 'done') states.set(w.name, { state: 'done', ...base, targetId: w.targetId });
    else if (w.state === 'failed') states.set(w.name, { state: 'failed', ...base });
    else states.set(w.name, { state: 'in-doubt', ...base, targetId: w.targetId, attempt: w.attempt });
  }
  return states;
}

/** One `dataSourceList` element, resolved to a connection name of the target. */
export interface ProfileDataSource {
  /** As in the snapshot's profile. */
  readonly ref: string;
  /** The connection's name in the target (after a rename by this run). */
  readonly targetName: string;
  /** True when the source listed the data source by name: the name is sent, not the id. */
  readonly asName: boolean;
}

interface ProfileStepBase {
  /** The snapshot's profile name (a delete: the target's). */
  readonly name: string;
}

/** A step that sends a request. */
export type ProfileSendStep =
  | (ProfileStepBase & {
      readonly kind: 'create';
      /** The name POSTed (`<name> (2)` for `--on-conflict rename`). */
      readonly targetName: string;
      readonly profile: ScanProfile;
      readonly dataSources: readonly ProfileDataSource[];
      /** 2 or more: resent after an in-doubt intent that the target's list did not show. */
      readonly attempt: number;
    })
  | (ProfileStepBase & {
      readonly kind: 'update';
      readonly targetName: string;
      readonly targetId: string;
      readonly profile: ScanProfile;
      readonly dataSources: readonly ProfileDataSource[];
      readonly fields: readonly FieldChange[];
      readonly attempt: number;
      /** The target's profile before the update (journaled; undo puts it back). */
      readonly before: ProfileImage;
    })
  | (ProfileStepBase & {
      readonly kind: 'delete';
      readonly targetName: string;
      readonly targetId: string;
      readonly attempt: number;
      /** The target's profile before the delete (journaled; undo creates it again). */
      readonly before: ProfileImage;
    });

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
  const list = Array.isArray(profile.dataSourceList) ? profile.dataSourceList : [];
  return {
    scanProfile: stripProfileServerFields(profile),
    dataSourceNames: list.map((ref) => nameOf(String(ref)) ?? null),
  };
}

/** One decision of the profile plan. */
export type ProfileStep =
  | ProfileSendStep
  | (ProfileStepBase & {
      readonly kind: 'done';
      readonly action: JournalOp;
      readonly targetName: string;
      readonly targetId: string | undefined;
      /** `journal`: an earlier run recorded it; `lookup`: an in-doubt request was found applied now. */
      readonly via: 'journal' | 'lookup';
    })
  | (ProfileStepBase & { readonly kind: 'exists' | 'unchanged'; readonly targetId: string | undefined })
  | (ProfileStepBase & { readonly kind: 'skipped'; readonly reason: string })
  | (ProfileStepBase & { readonly kind: 'conflict'; readonly targetId: string | undefined })
  | (ProfileStepBase & { readonly kind: 'blocked'; readonly problems: readonly Problem[] });

/** The plan of the profile phase. */
export interface ProfilePlan {
  /** Snapshot profiles in name order, then the deletes (target name order). */
  readonly steps: readonly ProfileStep[];
  /** Pre-flight problems: conflicts (`--on-conflict fail`) and profiles naming absent connections. */
  readonly problems: readonly Problem[];
}

/** A connection of the target, as far as the plan needs it. */
export interface ProfileTargetConnection {
  readonly name: string;
  readonly _id?: string | undefined;
}

/** Input of {@link planProfiles}. */
export interface ProfilePlanInput {
  readonly profiles: readonly SnapshotScanProfile[];
  /** False for a snapshot whose header does not include scan profiles (version 1): nothing is planned. */
  readonly included: boolean;
  /** The target's profiles (`GET /scanProfiles`), read now. */
  readonly targetProfiles: readonly ScanProfile[];
  /** The target's connections, read now (before the connection phase). */
  readonly targetConnections: readonly ProfileTargetConnection[];
  /**
   * Connections this run creates or created (snapshot name -> name in the target): the connection
   * plan's create, rename, reconcile and done steps.
   */
  readonly createdConnections: ReadonlyMap<string, string>;
  readonly journal: ReadonlyMap<string, ProfileJournalState>;
  readonly onConflict: ProfileOnConflict;
  readonly prune: boolean;
  readonly allowRun: boolean;
  /** `--only`: profile names restored (and pruned within); undefined = all. */
  readonly only: NameSelection | undefined;
}

const SINGLE_RUN_REASON =
  'one-time profile (isSingleRunScan): creating it starts a scan at once; pass --allow-run to create it';

/** Plan the profile phase (see the module comment). Pure. */
export function planProfiles(input: ProfilePlanInput): ProfilePlan {
  if (!input.included) return { steps: [], problems: [] };
  const targetByName = new Map<string, ScanProfile>();
  for (const p of input.targetProfiles) if (typeof p.name === 'string') targetByName.set(p.name, p);
  const connectionByName = new Map(input.targetConnections.map((c) => [c.name, c]));
  const connectionNameById = new Map<string, string>();
  for (const c of input.targetConnections) if (c._id !== undefined) connectionNameById.set(c._id, c.name);
  const reserved = new Set(targetByName.keys());
  for (const p of input.profiles) reserved.add(p.scanProfile.name);

  const steps: ProfileStep[] = [];
  const problems: Problem[] = [];
  const snapshotNames = new Set<string>();
  const sorted = [...input.profiles].sort((a, b) => compareNames(a.scanProfile.name, b.scanProfile.name));
  for (const entry of sorted) {
    const name = entry.scanProfile.name;
    snapshotNames.add(name);
    if (input.only !== undefined && !input.only.has(name)) continue;
    const journal = input.journal.get(name);
    if (journal?.state === 'done' && journal.action !== 'delete' && targetByName.has(journal.targetName)) {
      steps.push({
        kind: 'done',
        name,
        action: journal.action,
        targetName: journal.targetName,
        targetId: journal.targetId,
        via: 'journal',
      });
      continue;
    }
    if (entry.scanProfile.isSingleRunScan === true && !input.allowRun) {
      steps.push({ kind: 'skipped', name, reason: SINGLE_RUN_REASON });
      continue;
    }
    const resolved = resolveDataSources(entry, connectionByName, input.createdConnections);
    if (!resolved.ok) {
      problems.push(...resolved.problems);
      steps.push({ kind: 'blocked', name, problems: resolved.problems });
      continue;
    }
    const dataSources = resolved.dataSources;
    const attempt = journal?.state === 'in-doubt' ? journal.attempt + 1 : 1;
    if (journal?.state === 'in-doubt' && journal.action === 'create') {
      // The earlier run may have created it under the name it sent: the target's list says.
      const found = targetByName.get(journal.targetName);
      if (found !== undefined) {
        steps.push({
          kind: 'done',
          name,
          action: 'create',
          targetName: journal.targetName,
          targetId: found._id,
          via: 'lookup',
        });
        continue;
      }
      steps.push({
        kind: 'create',
        name,
        targetName: journal.targetName,
        profile: entry.scanProfile,
        dataSources,
        attempt,
      });
      continue;
    }
    const existing = targetByName.get(name);
    if (existing === undefined) {
      steps.push({
        kind: 'create',
        name,
        targetName: name,
        profile: entry.scanProfile,
        dataSources,
        attempt,
      });
      continue;
    }
    switch (input.onConflict) {
      case 'skip':
        steps.push({ kind: 'exists', name, targetId: existing._id });
        break;
      case 'fail':
        steps.push({ kind: 'conflict', name, targetId: existing._id });
        problems.push({
          entry: name,
          message: `scan profile '${name}' already exists in the target (--on-conflict fail)`,
        });
        break;
      case 'rename': {
        const targetName = nextFreeName(name, reserved);
        reserved.add(targetName);
        steps.push({ kind: 'create', name, targetName, profile: entry.scanProfile, dataSources, attempt });
        break;
      }
      case 'update': {
        const fields = compareWithTarget(entry, dataSources, existing, connectionNameById);
        if (fields.length === 0 || existing._id === undefined) {
          steps.push({ kind: 'unchanged', name, targetId: existing._id });
        } else {
          steps.push({
            kind: 'update',
            name,
            targetName: name,
            targetId: existing._id,
            profile: entry.scanProfile,
            dataSources,
            fields,
            attempt,
            before: makeProfileImage(
              existing,
              (ref) => connectionNameById.get(ref) ?? (connectionByName.has(ref) ? ref : undefined),
            ),
          });
        }
        break;
      }
      default: {
        const unreachable: never = input.onConflict;
        throw new Error(`unknown --on-conflict ${String(unreachable)}`);
      }
    }
  }
  if (input.prune) {
    const extra = [...targetByName.values()]
      .filter((p) => !snapshotNames.has(p.name) && (input.only === undefined || input.only.has(p.name)))
      .sort((a, b) => compareNames(a.name, b.name));
    for (const p of extra) {
      if (p._id === undefined) continue;
      const journal = input.journal.get(p.name);
      steps.push({
        kind: 'delete',
        name: p.name,
        targetName: p.name,
        targetId: p._id,
        attempt: journal?.state === 'in-doubt' ? journal.attempt + 1 : 1,
        before: makeProfileImage(
          p,
          (ref) => connectionNameById.get(ref) ?? (connectionByName.has(ref) ? ref : undefined),
        ),
      });
    }
    // A delete recorded done whose profile is gone: reported as done.
    for (const [name, state] of input.journal) {
      if (state.state === 'done' && state.action === 'delete' && !targetByName.has(name)) {
        steps.push({
          kind: 'done',
          name,
          action: 'delete',
          targetName: state.targetName,
          targetId: state.targetId,
          via: 'journal',
        });
      }
    }
  }
  return { steps, problems };
}

/** `<name> (2)`, `(3)`, ...: the first not taken. */
function nextFreeName(name: string, taken: ReadonlySet<string>): string {
  for (let n = 2; ; n++) {
    const candidate = `${name} (${n})`;
    if (!taken.has(candidate)) return candidate;
  }
}

function resolveDataSources(
  entry: SnapshotScanProfile,
  connectionByName: ReadonlyMap<string, ProfileTargetConnection>,
  created: ReadonlyMap<string, string>,
): { ok: true; dataSources: ProfileDataSource[] } | { ok: false; problems: Problem[] } {
  const remapped = remapDataSourceList(entry.scanProfile.dataSourceList, {
    recordedNames: entry.dataSourceNames,
    targetNameOf: (n) => created.get(n) ?? (connectionByName.has(n) ? n : undefined),
  });
  if (!remapped.ok) {
    const name = entry.scanProfile.name;
    return {
      ok: false,
      problems: remapped.problems.map((p) => ({
        entry: name,
        path: `/dataSourceList/${p.index}`,
        message: p.message,
        ...(p.causedBy === undefined ? {} : { causedBy: p.causedBy }),
      })),
    };
  }
  return {
    ok: true,
    dataSources: remapped.elements.map((e) => ({
      ref: e.ref,
      targetName: e.targetName,
      asName: e.form === 'name',
    })),
  };
}

/** The compared fields that differ between the snapshot's profile and the target's (diff semantics). */
function compareWithTarget(
  entry: SnapshotScanProfile,
  dataSources: readonly ProfileDataSource[],
  existing: ScanProfile,
  connectionNameById: ReadonlyMap<string, string>,
): FieldChange[] {
  const wanted = toComparableProfile(
    entry.scanProfile,
    dataSources.map((d) => d.targetName),
    isProfileServerField,
  );
  const list = Array.isArray(existing.dataSourceList) ? existing.dataSourceList : [];
  const current = toComparableProfile(
    existing,
    list.map((ref) => connectionNameById.get(ref) ?? ref),
    isProfileServerField,
  );
  return compareProfileFields(wanted, current);
}

/** The body to send: server fields dropped, the target name, `dataSourceList` remapped. */
export function buildProfileBody(
  step: Extract<ProfileSendStep, { kind: 'create' | 'update' }>,
  connectionIds: ReadonlyMap<string, string | undefined>,
): { ok: true; body: Record<string, unknown> } | { ok: false; message: string } {
  const list: string[] = [];
  for (const ds of step.dataSources) {
    if (!connectionIds.has(ds.targetName)) {
      return {
        ok: false,
        message: `connection '${ds.targetName}' is not in the target (was its creation refused?)`,
      };
    }
    list.push(ds.asName ? ds.targetName : (connectionIds.get(ds.targetName) ?? ds.targetName));
  }
  return {
    ok: true,
    body: { ...stripProfileServerFields(step.profile), name: step.targetName, dataSourceList: list },
  };
}
