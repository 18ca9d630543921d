/**
 * The import plan (pure: no fs, no HTTP, no logger). Data in, a typed plan out; `--dry-run` prints the
 * very plan that the real run executes.
 *
 * Per snapshot entry, in this order of precedence:
 * 1. the run being finished (an interrupted run of this import) created it, and the target still holds
 *    it -> `done`; the journal state handed in is that run's only, so a finished run hides no drift;
 * 2. that run holds an intent without an outcome (in doubt) -> `reconcile` (look the target name up
 *    before sending anything again);
 * 3. its name exists in the target:
 *    - `--on-conflict skip` (default) -> `exists`: left alone, reported as existing;
 *    - `--on-conflict fail` -> `conflict`: a pre-flight problem (the run is refused, exit 3);
 *    - `--on-conflict rename` -> `rename`: created as `<name> (2)` (or the next free `(n)`);
 *    - `--on-conflict update` -> `update` when a compared field differs (the comparison of `diff`),
 *      else `unchanged` (or `done` with `op: 'update'` when the journal says an earlier run updated it);
 * 4. otherwise -> `create`.
 * With `prune`, every target connection the snapshot does not hold (within `only`) -> `delete`; a name the
 * journal says was deleted (or whose delete is in doubt) and that the target no longer holds -> `done`
 * with `op: 'delete'`. Deletes come after the snapshot's entries, in name order.
 * An entry that would be sent (create, rename, reconcile) but fails its checks becomes `invalid`.
 */
import { compareNames, pairByName } from '../connections/match.js';
import type { FieldChange } from '../diff/types.js';
import type { Problem } from '../errors.js';
import type { Connection } from '../model/connection.js';
import type { WritePayload } from '../sync/execute.js';
import type { SafeImage } from '../sync/journal/records.js';
import type { WriteState } from '../sync/journal/replay.js';
import { decideExisting, journaledDeletes, type OnConflict, prunable } from '../sync/plan.js';
import { PreparedSource, PreparedUpdate } from './prepared-sources.js';
import type { NameSelection } from './selection.js';
import { fieldAt, held, type ImageSource, type SecretWritten, type Source } from './source.js';

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

/** Build the plan (see the module comment for the rules). */
export function planImport(input: PlanInput): ImportPlan {
  const selected = input.only
    ? input.entries.filter((e) => input.only?.has(e.name, e.type))
    : [...input.entries];
  const targetByName = new Map(input.target.map((t) => [t.name, t]));
  const taken = new Set<string>([...input.target.map((t) => t.name), ...input.entries.map((e) => e.name)]);

  const steps: PlanStep[] = [];
  const seen = new Set<string>();
  const ordered = [...selected].sort((a, b) => compareNames(a.name, b.name));
  // pairByName is the shared definition of "exists in the target" (diff uses it too).
  const pairing = pairByName(ordered, input.target);

  const prepare = input.prepare ?? asPrepared;
  for (const entry of ordered) {
    if (seen.has(entry.name)) {
      steps.push(
        stepOf(entry, {
          kind: 'invalid',
          wouldBe: 'create',
          targetName: entry.name,
          problems: [
            { entry: entry.name, type: entry.type, message: 'the snapshot holds this name more than once' },
          ],
        }),
      );
      continue;
    }
    seen.add(entry.name);
    const written = input.journal.get(entry.name);
    const journaled = written?.op === 'create' ? written : undefined;
    let send: SendStep | undefined;
    if (journaled?.state === 'done' && targetByName.has(journaled.targetName)) {
      steps.push(
        stepOf(entry, {
          kind: 'done',
          targetName: journaled.targetName,
          targetId: journaled.targetId,
        }),
      );
      continue;
    }
    if (journaled?.state === 'in-doubt') {
      // A renamed entry is re-sent under the name its intent used, never under a new one.
      const targetName = journaled.targetName;
      send = stepOf(entry, {
        kind: 'reconcile',
        targetName,
        source: new PreparedSource(prepare, entry, targetName),
        intentAt: journaled.intentAt,
      });
    } else if (targetByName.has(entry.name)) {
      const current = targetByName.get(entry.name);
      const targetId = current?._id;
      const decision = decideExisting(entry.name, input.onConflict, taken);
      if (decision.kind === 'update') {
        const comparable = current?.connection !== undefined || current?.compared !== undefined;
        steps.push(
          comparable && current !== undefined && input.converge !== undefined
            ? planUpdate(entry, () => prepare(entry), current, input.converge, input.journal)
            : stepOf(entry, { kind: 'exists', targetId }),
        );
        continue;
      }
      if (decision.kind !== 'rename') {
        steps.push(stepOf(entry, { kind: decision.kind, targetId }));
        continue;
      }
      send = stepOf(entry, {
        kind: 'rename',
        targetName: decision.targetName,
        source: new PreparedSource(prepare, entry, decision.targetName),
      });
    } else {
      send = stepOf(entry, {
        kind: 'create',
        targetName: entry.name,
        source: new PreparedSource(prepare, entry, entry.name),
      });
    }
    const problems = input.check(entry, () => prepare(entry));
    if (problems.length > 0) {
      steps.push(
        stepOf(entry, {
          kind: 'invalid',
          wouldBe: send.kind,
          targetName: send.targetName,
          problems,
        }),
      );
    } else {
      steps.push(send);
    }
  }

  if (input.prune && input.converge !== undefined) {
    steps.push(...planDeletes(pairing.onlyTarget, input, input.converge));
    const deletes = journaledDeletes(
      input.journal,
      (state) => state.op === 'delete' && state.state !== 'failed',
      (name) => targetByName.has(name),
      (name, state) => input.only?.has(name, state.type ?? '') ?? true,
    );
    for (const [name, state] of deletes) {
      const type = state.type ?? '';
      steps.push({
        kind: 'done',
        op: 'delete',
        name,
        type,
        sourceId: undefined,
        targetName: name,
        targetId: undefined,
      });
    }
  }

  const counts = Object.fromEntries(PLAN_STEP_KINDS.map((k) => [k, 0])) as Record<PlanStepKind, number>;
  for (const step of steps) counts[step.kind] += 1;
  const sends = counts.create + counts.rename + counts.reconcile;
  return { steps, counts, sends, changes: sends + counts.update + counts.delete };
}

/**
 * A step: the entry's fields (only those: a placed entry's `place` stays out), then the step's own.
 * Built on a literal with `Object.assign`, not with `{...base, ...}`: V8 gives each object a spread
 * builds here a shape of its own (100 000 shapes, more memory than the steps, for an import of 100 000
 * entries).
 */
function stepOf<const T extends object>(entry: StepBase, own: T): StepBase & T {
  return Object.assign({ name: entry.name, type: entry.type, sourceId: entry.sourceId }, own);
}

/** The default {@link PlanInput.prepare}: entries given whole. */
function asPrepared(entry: PlanEntry): PreparedEntry {
  if (!('body' in entry))
    throw new Error(`planImport: entry ${entry.name} has no body and no prepare was given`);
  return entry as PreparedEntry;
}

/**
 * An entry present in the target under `--on-conflict update`: `update`, `unchanged`, `done` or
 * `invalid`. The target's connection is compared now, or was when listed (`compared`): then an
 * unchanged entry is not prepared again.
 */
function planUpdate(
  planned: PlanEntry,
  prepared: () => PreparedEntry,
  current: TargetConnection,
  converge: ConvergeHelpers,
  journal: ReadonlyMap<string, JournaledWrite>,
): PlanStep {
  const targetId = current._id;
  const fields =
    current.compared ??
    converge.compare(prepared(), current.connection as Connection).map((f) => fieldAt(f.path));
  if (fields.length === 0) {
    const journaled = journal.get(planned.name);
    if (journaled?.op === 'update' && journaled.state !== 'failed') {
      return stepOf(planned, {
        kind: 'done',
        op: 'update',
        targetName: planned.name,
        targetId,
      });
    }
    return stepOf(planned, { kind: 'unchanged', targetId });
  }
  const entry = prepared();
  const problems = converge.checkUpdate(entry);
  if (problems.length > 0) {
    return stepOf(entry, {
      kind: 'invalid',
      wouldBe: 'update',
      targetName: entry.name,
      problems,
    });
  }
  return stepOf(planned, {
    kind: 'update',
    targetName: planned.name,
    targetId,
    fields,
    secrets: converge.secretsWritten(entry),
    before: current.before ?? held(converge.imageOf(current.connection as Connection)),
    source: new PreparedUpdate(prepared, converge),
  });
}

/** Target connections the snapshot does not hold, within `only`: one `delete` each, in name order. */
function planDeletes(
  onlyTarget: readonly TargetConnection[],
  input: PlanInput,
  converge: ConvergeHelpers,
): DeleteStep[] {
  const typeOf = (t: TargetConnection) =>
    t.type ?? (typeof t.connection?.type === 'string' ? t.connection.type : '');
  return prunable(onlyTarget, (t) => input.only === undefined || input.only.has(t.name, typeOf(t))).map(
    (t) => ({
      kind: 'delete',
      name: t.name,
      type: typeOf(t),
      sourceId: undefined,
      targetName: t.name,
      targetId: t._id,
      before: t.before ?? held(converge.imageOf(t.connection ?? { name: t.name })),
    }),
  );
}
