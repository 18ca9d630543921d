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
import type { FieldChange } from '../diff/types.js';
import type { Problem } from '../errors.js';
import type { ScanProfile, SnapshotScanProfile } from '../model/scan-profile.js';
import { remapDataSourceList } from '../profiles/data-source-list.js';
import type { JournalOp } from '../sync/journal/records.js';
import type { WriteState } from '../sync/journal/replay.js';
import {
  compareProfile,
  type DataSourceRef,
  makeProfileImage,
  type ProfileImage,
} from '../sync/kinds/scan-profile.js';
import { decideExisting, journaledDeletes, type OnConflict, prunable } from '../sync/plan.js';
import type { TargetConnection } from './plan.js';
import type { NameSelection } from './selection.js';

export type { ProfileImage } from '../sync/kinds/scan-profile.js';

/** What the journal says about one profile (by its snapshot name; a delete by its target name). */
export type ProfileJournalState = Pick<
  WriteState,
  'op' | 'state' | 'targetName' | 'targetId' | 'attempt' | 'intentAt'
>;

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
      readonly dataSources: readonly DataSourceRef<string>[];
      /** 2 or more: resent after an in-doubt intent that the target's list did not show. */
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
      /** `lookup`: when the interrupted run wrote its intent. */
      readonly intentAt?: string | undefined;
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

/** Input of {@link planProfiles}. */
export interface ProfilePlanInput {
  readonly profiles: readonly SnapshotScanProfile[];
  /** False for a snapshot whose header does not include scan profiles (version 1): nothing is planned. */
  readonly included: boolean;
  /** The target's profiles (`GET /scanProfiles`), read now. */
  readonly targetProfiles: readonly ScanProfile[];
  /** The target's connections, read now (before the connection phase). */
  readonly targetConnections: readonly Pick<TargetConnection, 'name' | '_id'>[];
  /**
   * Connections this run creates or created (snapshot name -> name in the target): the connection
   * plan's create, rename, reconcile and done steps.
   */
  readonly createdConnections: ReadonlyMap<string, string>;
  readonly journal: ReadonlyMap<string, ProfileJournalState>;
  readonly onConflict: OnConflict;
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
  const nameOf = (ref: string) =>
    connectionNameById.get(ref) ?? (connectionByName.has(ref) ? ref : undefined);
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
    if (journal?.state === 'done' && journal.op !== 'delete' && targetByName.has(journal.targetName)) {
      steps.push({
        kind: 'done',
        name,
        action: journal.op,
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
    // An earlier run may have created it under the name it sent (it is sent again under that name when
    // the target's list does not show it).
    const inDoubt = journal?.state === 'in-doubt' && journal.op === 'create' ? journal : undefined;
    const found = inDoubt && targetByName.get(inDoubt.targetName);
    if (inDoubt !== undefined && found !== undefined) {
      steps.push({
        kind: 'done',
        name,
        action: 'create',
        targetName: inDoubt.targetName,
        targetId: found._id,
        via: 'lookup',
        intentAt: inDoubt.intentAt,
      });
      continue;
    }
    const existing = inDoubt ? undefined : targetByName.get(name);
    const decision = existing === undefined ? undefined : decideExisting(name, input.onConflict, reserved);
    if (existing === undefined || decision === undefined || decision.kind === 'rename') {
      const targetName = inDoubt?.targetName ?? (decision?.kind === 'rename' ? decision.targetName : name);
      steps.push({ kind: 'create', name, targetName, profile: entry.scanProfile, dataSources, attempt });
      continue;
    }
    if (decision.kind === 'conflict')
      problems.push({
        entry: name,
        message: `scan profile '${name}' already exists in the target (--on-conflict fail)`,
      });
    const fields =
      decision.kind === 'update'
        ? compareProfile(
            entry.scanProfile,
            dataSources.map((d) => d.targetName),
            existing,
            nameOf,
          )
        : [];
    if (decision.kind !== 'update' || fields.length === 0 || existing._id === undefined) {
      const kind = decision.kind === 'update' ? 'unchanged' : decision.kind;
      steps.push({ kind, name, targetId: existing._id });
      continue;
    }
    steps.push({
      kind: 'update',
      name,
      targetName: name,
      targetId: existing._id,
      profile: entry.scanProfile,
      dataSources,
      fields,
      attempt,
      before: makeProfileImage(existing, nameOf),
    });
  }
  if (input.prune) {
    const extra = [...targetByName.values()].filter((p) => !snapshotNames.has(p.name));
    for (const p of prunable(extra, (p) => input.only === undefined || input.only.has(p.name))) {
      if (p._id === undefined) continue;
      const journal = input.journal.get(p.name);
      const attempt = journal?.state === 'in-doubt' ? journal.attempt + 1 : 1;
      const before = makeProfileImage(p, nameOf);
      steps.push({ kind: 'delete', name: p.name, targetName: p.name, targetId: p._id, attempt, before });
    }
    const deletes = journaledDeletes(
      input.journal,
      (state) => state.state !== 'failed' && state.op === 'delete',
      (name) => targetByName.has(name),
      (name) => input.only === undefined || input.only.has(name),
    );
    for (const [name, state] of deletes) {
      const { targetName, targetId } = state;
      steps.push({ kind: 'done', name, action: 'delete', targetName, targetId, via: 'journal' });
    }
  }
  return { steps, problems };
}

function resolveDataSources(
  entry: SnapshotScanProfile,
  connectionByName: ReadonlyMap<string, Pick<TargetConnection, 'name' | '_id'>>,
  created: ReadonlyMap<string, string>,
): { ok: true; dataSources: DataSourceRef<string>[] } | { ok: false; problems: Problem[] } {
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
