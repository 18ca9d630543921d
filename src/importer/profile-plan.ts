/**
 * The scan profile plan's vocabulary: the journal's word on a profile, the steps (what `--dry-run`
 * prints and the run executes, one request at a time) and the plan with its pre-flight problems. The
 * rules that make them are the scan profile kind's (`sync/kinds/scan-profile.ts`, through the planner
 * of `sync/plan.ts`).
 */
import type { FieldChange } from '../diff/types.js';
import type { Problem } from '../errors.js';
import type { ScanProfile, SnapshotScanProfile } from '../model/scan-profile.js';
import type { JournalOp } from '../sync/journal/records.js';
import type { WriteState } from '../sync/journal/replay.js';
import type { DataSourceRef, ProfileImage } from '../sync/kinds/scan-profile.js';
import type { OnConflict } from '../sync/plan.js';
import type { TargetConnection } from './plan.js';
import type { NameSelection } from './selection.js';

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
