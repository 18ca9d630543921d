/**
 * The connection plan's vocabulary: a snapshot entry as planned, a target connection as listed, the
 * steps (what `--dry-run` prints and the run executes) and their counts. The rules that make them are
 * the connection kind's (`sync/kinds/connection.ts`, through the planner of `sync/plan.ts`).
 */
import type { FieldChange } from '../diff/types.js';
import type { Problem } from '../errors.js';
import type { Connection } from '../model/connection.js';
import type { WritePayload } from '../sync/execute.js';
import type { SafeImage } from '../sync/journal/records.js';
import type { WriteState } from '../sync/journal/replay.js';
import type { OnConflict } from '../sync/plan.js';
import type { NameSelection } from './selection.js';
import type { ImageSource, SecretWritten, Source } from './source.js';

export { chooseRenamedName, ON_CONFLICT_CHOICES, type OnConflict } from '../sync/plan.js';

/**
 * A snapshot entry as the plan holds it: what it is, not its body. An import of 100 000 entries keeps
 * only these; a body is prepared again (read from the snapshot by place) when it is checked and when
 * it is sent, through {@link PlanInput.prepare}.
 */
export interface PlanEntry {
  readonly name: string;
  readonly type: string;
  /** `_id` in the source environment (for the id map), when the snapshot had one. */
  readonly sourceId: string | undefined;
}

/** A snapshot entry ready to send: overrides applied, server-managed fields stripped. */
export interface PreparedEntry extends PlanEntry {
  /** The `ds_connection` body (its `name` is replaced by the target name when renamed). */
  readonly body: Readonly<Record<string, unknown>>;
  /** The body with every secret masked, for the journal (undo compares with it). */
  readonly image?: SafeImage;
}

/**
 * A connection of the target, as far as planning needs it. For `--on-conflict update` and `--prune`
 * either the whole connection as listed (`connection`), or what {@link targetSummarizer} kept of it
 * while it was listed: the comparison with its snapshot entry, and its masked image only when it may be
 * updated or deleted, so that what is held does not grow with the target's unchanged connections.
 */
export interface TargetConnection {
  readonly name: string;
  readonly _id?: string | undefined;
  /** The whole connection as listed. */
  readonly connection?: Connection;
  /** Its type (a delete step names it), when `connection` is not kept. */
  readonly type?: string;
  /** Compared with its snapshot entry when listed: the fields that differ (none: unchanged). */
  readonly compared?: readonly FieldChange[];
  /** Its image, secrets masked, when `connection` is not kept and it may be updated or deleted. */
  readonly before?: ImageSource;
}

interface StepBase {
  readonly name: string;
  readonly type: string;
  readonly sourceId: string | undefined;
}

/** A step that sends a POST (maybe after a look-up). */
export interface SendStep extends StepBase {
  readonly kind: 'create' | 'rename' | 'reconcile';
  /** The name POSTed (differs from `name` for `rename`; the journal's intent name for `reconcile`). */
  readonly targetName: string;
  /**
   * Where the body to POST (its `name` the target name) and its masked image come from, prepared when
   * loaded: the step does not hold them, so a plan of many creates stays small. Loaded when sent.
   */
  readonly source: Source<WritePayload>;
  /** `reconcile`: when the interrupted run wrote its intent. */
  readonly intentAt?: string | undefined;
}

/** A PUT of a connection that differs from its snapshot entry (`--on-conflict update`). */
export interface UpdateStep extends StepBase {
  readonly kind: 'update';
  readonly targetName: string;
  readonly targetId: string | undefined;
  /** The fields that differ: their paths (`diff` shows the values). */
  readonly fields: readonly FieldChange[];
  /**
   * The secrets the PUT writes (held in clear by the snapshot or the overrides), and where each value
   * comes from; the target's are masked, so they are not compared and not among `fields`.
   */
  readonly secrets: readonly SecretWritten[];
  /** The target's object before, secrets masked (journaled; undo puts it back). */
  readonly before: ImageSource;
  /**
   * Where the PUT body comes from: prepared again from the snapshot when sent, as a create's (a plan of
   * 100 000 updates holding every body and its image peaked at 638 MB).
   */
  readonly source: Source<WritePayload>;
}

/** A DELETE of a target connection the snapshot does not hold (`--prune`). */
export interface DeleteStep extends StepBase {
  readonly kind: 'delete';
  readonly targetName: string;
  readonly targetId: string | undefined;
  /** The target's object before, secrets masked (journaled; undo re-creates it). */
  readonly before: ImageSource;
}

/** A step that changes an existing connection (PUT or DELETE). */
export type ChangeStep = UpdateStep | DeleteStep;

/** One decision of the plan. */
export type PlanStep =
  | SendStep
  | ChangeStep
  | (StepBase & { readonly kind: 'exists' | 'unchanged' | 'conflict'; readonly targetId: string | undefined })
  | (StepBase & {
      readonly kind: 'done';
      readonly targetName: string;
      readonly targetId: string | undefined;
      /** What the earlier run did; absent = created. */
      readonly op?: 'update' | 'delete';
    })
  | (StepBase & {
      readonly kind: 'invalid';
      /** What it would have been. */
      readonly wouldBe: SendStep['kind'] | 'update';
      readonly targetName: string;
      readonly problems: readonly Problem[];
    });

/** Every step kind. */
export type PlanStepKind = PlanStep['kind'];

/** Every step kind, in the order summaries list them. */
export const PLAN_STEP_KINDS: readonly PlanStepKind[] = [
  'create',
  'rename',
  'reconcile',
  'update',
  'delete',
  'done',
  'unchanged',
  'exists',
  'conflict',
  'invalid',
];

/** What the journal says of a connection: the last write of it in the run being finished. */
export type JournaledWrite = Pick<WriteState, 'op' | 'state' | 'targetName' | 'intentAt'> &
  Partial<Pick<WriteState, 'targetId' | 'type'>>;

/** Input of {@link planImport}. */
export interface PlanInput {
  /** The snapshot's entries: whole ({@link PreparedEntry}), or lean with a {@link PlanInput.prepare}. */
  readonly entries: readonly PlanEntry[];
  /**
   * The entry ready to send, prepared again each time it is needed (checks, an update's comparison,
   * a send step's {@link SendStep.source}); default: the entry itself, which must then be a
   * {@link PreparedEntry}.
   */
  readonly prepare?: (entry: PlanEntry) => PreparedEntry;
  readonly target: readonly TargetConnection[];
  /** The run being finished: its last write of each connection, by name (none for a new run). */
  readonly journal: ReadonlyMap<string, JournaledWrite>;
  readonly onConflict: OnConflict;
  /** Narrow the plan to these connections (`--only`, `--type`); undefined = all. */
  readonly only?: NameSelection | undefined;
  /**
   * Problems that would stop this entry being sent (template, masked secrets, placeholders).
   * `prepared` prepares the entry when called (a caller that checked it earlier need not).
   */
  readonly check: (entry: PlanEntry, prepared: () => PreparedEntry) => readonly Problem[];
  /** Delete target connections the snapshot does not hold (`--prune`). */
  readonly prune?: boolean;
  /**
   * What `--on-conflict update` and `--prune` need, injected so that the plan stays pure: the diff's
   * comparison of an entry with a target connection, an update's body and checks, and safe images.
   */
  readonly converge?: ConvergeHelpers;
}

/** The comparison and image functions {@link planImport} uses for updates and deletes. */
export interface ConvergeHelpers {
  /** The fields that differ between the entry's body and the target's connection (diff's comparison). */
  compare(entry: PreparedEntry, target: Connection): readonly FieldChange[];
  /** The PUT body of an entry and the secrets it sends in clear. */
  updateBody(entry: PreparedEntry): { body: Record<string, unknown>; secretsSent: readonly string[] };
  /** The secrets an update of the entry writes, and where each value comes from. */
  secretsWritten(entry: PreparedEntry): readonly SecretWritten[];
  /** Problems that would stop the update being sent (a masked secret is kept by the service, not one). */
  checkUpdate(entry: PreparedEntry): readonly Problem[];
  /** A connection with every secret masked. */
  imageOf(connection: Readonly<Record<string, unknown>>): SafeImage;
}

/** The plan: steps in code-unit order of name, and counts per kind. */
export interface ImportPlan {
  readonly steps: readonly PlanStep[];
  readonly counts: Readonly<Record<PlanStepKind, number>>;
  /** Steps that will (or may, for `reconcile`) send a POST. */
  readonly sends: number;
  /** Every write the plan would make: creates, updates and deletes (what `--max-changes` counts). */
  readonly changes: number;
}

/** True for steps that send a PUT or a DELETE. */
export function isChangeStep(step: PlanStep): step is ChangeStep {
  return step.kind === 'update' || step.kind === 'delete';
}

/** True for steps that send. */
export function isSendStep(step: PlanStep): step is SendStep {
  return step.kind === 'create' || step.kind === 'rename' || step.kind === 'reconcile';
}
