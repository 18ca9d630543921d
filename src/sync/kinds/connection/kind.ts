/**
 * The connection kind: keyed by name; how the executor writes a data source connection
 * (`/ds_connections`: spec 4.x, api-notes [code]); its steps (what `--dry-run` prints and the run
 * executes) and its planning rules ({@link planImport}, with what `--on-conflict update` and `--prune`
 * need of it: `ConvergeHelpers` of `converge.ts`); its descriptor. Its import is `import.ts`, its plan's
 * rendering `render.ts`, its undo `undo.ts`.
 */
import {
  createConnection,
  deleteConnection,
  getConnectionByName,
  listConnections,
  updateConnection,
} from '../../../api/connections.js';
import type { HttpClient } from '../../../api/http.js';
import type { FieldChange } from '../../../diff/types.js';
import { countOf } from '../../../display-name.js';
import type { Problem } from '../../../errors.js';
import type { NameSelection } from '../../../importer/selection.js';
import { held, type ImageSource, type SecretWritten, type Source } from '../../../importer/source.js';
import type { Connection } from '../../../model/connection.js';
import type { KindWriter, WriteOutcome, WritePayload } from '../../execute.js';
import type { SafeImage } from '../../journal/records.js';
import type { WriteState } from '../../journal/replay.js';
import type { SyncKind } from '../../kind.js';
import { countSteps, type Decision, type OnConflict, planKind } from '../../plan.js';
import type { ConvergeHelpers } from './converge.js';
import {
  buildIdMap,
  buildReport,
  type ConnectionRun,
  connectionPreflight,
  countOutcomes,
  formatSummary,
  runConnectionImport,
  startConnectionImport,
} from './import.js';
import { describeStep, planJson, planMarkdown } from './render.js';
import { planConnectionUndo } from './undo.js';

/** The executor's writer of connections, bound to `client`. */
function connectionWriter(client: HttpClient): KindWriter {
  return {
    // The user's Ctrl-C does not abort a POST in flight: it settles and is journaled.
    create: async (body) => (await createConnection(client, { ...body }))._id,
    update: (target, body, signal) => updateConnection(client, target.targetName, { ...body }, { signal }),
    remove: (target, signal) => deleteConnection(client, target.targetName, { signal }),
    lookup: async (name, signal) => {
      const found = await getConnectionByName(client, name, { signal });
      const id = typeof found?._id === 'string' ? found._id : undefined;
      return found === undefined ? undefined : { id, createdAt: found.created_at };
    },
  };
}

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

/** The plan: steps in code-unit order of name, and counts per kind. */
export interface ImportPlan {
  readonly steps: readonly PlanStep[];
  readonly counts: Readonly<Record<PlanStepKind, number>>;
  /** Steps that will (or may, for `reconcile`) send a POST. */
  readonly sends: number;
  /** Every write the plan would make: creates, updates and deletes (what `--max-changes` counts). */
  readonly changes: number;
  /** Plans again, as existing, the entries of connections someone else created meanwhile (`update`). */
  readonly replan?: (found: readonly Connection[]) => ImportPlan;
}

/** True for steps that send a PUT or a DELETE. */
export function isChangeStep(step: PlanStep): step is ChangeStep {
  return step.kind === 'update' || step.kind === 'delete';
}

/** True for steps that send. */
export function isSendStep(step: PlanStep): step is SendStep {
  return step.kind === 'create' || step.kind === 'rename' || step.kind === 'reconcile';
}

/**
 * The connection plan, by the planner's rules (`sync/plan.ts`), and its counts. The steps of its own:
 * a second entry of a name -> `invalid`; a create in doubt -> `reconcile` (looked up, when sent, by the
 * name its intent used); `--on-conflict update` -> `update` when a compared field differs (the
 * comparison of `diff`), else `unchanged`, or `done` with `op: 'update'` when the run being finished
 * updated it; a journaled delete gone from the target -> `done` with `op: 'delete'`. An entry that
 * would be sent (create, rename, reconcile) but fails its checks becomes `invalid`.
 */
export function planImport(input: PlanInput): ImportPlan {
  const prepare = input.prepare ?? asPrepared;
  const { converge } = input;
  const typeOf = (o: { type?: string; connection?: Connection }) =>
    o.type ?? (typeof o.connection?.type === 'string' ? o.connection.type : '');
  const send = (entry: PlanEntry, kind: SendStep['kind'], targetName: string, intentAt?: string) => {
    const source = { load: () => preparedPayload(prepare(entry), targetName) };
    const problems = input.check(entry, () => prepare(entry));
    if (problems.length > 0) return stepOf(entry, { kind: 'invalid', wouldBe: kind, targetName, problems });
    return stepOf(
      entry,
      kind === 'reconcile' ? { kind, targetName, source, intentAt } : { kind, targetName, source },
    );
  };
  const step = (entry: PlanEntry, d: Decision<TargetConnection, JournaledWrite>): PlanStep => {
    const targetId = d.current?._id;
    switch (d.kind) {
      case 'done':
        return stepOf(entry, { kind: 'done', targetName: d.targetName, targetId: d.written?.targetId });
      case 'in-doubt':
        // A renamed entry is re-sent under the name its intent used, never under a new one.
        return send(entry, 'reconcile', d.targetName, d.written?.intentAt);
      case 'create':
      case 'rename':
        return send(entry, d.kind, d.targetName);
      case 'update': {
        const current = d.current as TargetConnection;
        return (current.connection !== undefined || current.compared !== undefined) && converge !== undefined
          ? planUpdate(entry, () => prepare(entry), current, converge, d.written)
          : stepOf(entry, { kind: 'exists', targetId });
      }
      default:
        return stepOf(entry, { kind: d.kind, targetId });
    }
  };
  const steps = planKind(
    {
      nameOf: (entry: PlanEntry) => entry.name,
      typeOf,
      duplicate: (entry) =>
        stepOf(entry, {
          kind: 'invalid',
          wouldBe: 'create',
          targetName: entry.name,
          problems: [
            { entry: entry.name, type: entry.type, message: 'the snapshot holds this name more than once' },
          ],
        }),
      step,
      remove: (t): PlanStep => ({
        kind: 'delete',
        name: t.name,
        type: typeOf(t),
        sourceId: undefined,
        targetName: t.name,
        targetId: t._id,
        before: t.before ?? held((converge as ConvergeHelpers).imageOf(t.connection ?? { name: t.name })),
      }),
      removed: (name, state): PlanStep => ({
        kind: 'done',
        op: 'delete',
        name,
        type: state.type ?? '',
        sourceId: undefined,
        targetName: name,
        targetId: undefined,
      }),
    },
    {
      desired: input.entries,
      actual: input.target,
      journal: input.journal,
      onConflict: input.onConflict,
      only: input.only,
      prune: input.prune === true && converge !== undefined,
    },
  );
  const counts = countSteps(steps, PLAN_STEP_KINDS);
  const sends = counts.create + counts.rename + counts.reconcile;
  return { steps, counts, sends, changes: sends + counts.update + counts.delete };
}

/**
 * A step: the entry's fields (only those: a placed entry's `place` stays out), then the step's own.
 * Built on a literal with `Object.assign`, not with `{...base, ...}`: V8 gives each object a spread
 * builds here a shape of its own (100 000 shapes, more memory than the steps, for an import of 100 000
 * entries).
 */
function stepOf<const T extends object>(entry: PlanEntry, own: T): PlanEntry & T {
  return Object.assign({ name: entry.name, type: entry.type, sourceId: entry.sourceId }, own);
}

/** The payload of a send step: its entry prepared when loaded, renamed to `targetName` if need be. */
function preparedPayload(entry: PreparedEntry, targetName: string): WritePayload {
  if (targetName === entry.name) return { body: entry.body, image: entry.image };
  // Renamed: the body and its image under the new name.
  return {
    body: { ...entry.body, name: targetName },
    image: entry.image && { ...entry.image, name: targetName },
  };
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
  written: JournaledWrite | undefined,
): PlanStep {
  const targetId = current._id;
  const fields =
    current.compared ??
    converge.compare(prepared(), current.connection as Connection).map((f) => ({ path: f.path }));
  if (fields.length === 0) {
    if (written?.op === 'update' && written.state !== 'failed')
      return stepOf(planned, { kind: 'done', op: 'update', targetName: planned.name, targetId });
    return stepOf(planned, { kind: 'unchanged', targetId });
  }
  const entry = prepared();
  const problems = converge.checkUpdate(entry);
  if (problems.length > 0)
    return stepOf(entry, { kind: 'invalid', wouldBe: 'update', targetName: entry.name, problems });
  return stepOf(planned, {
    kind: 'update',
    targetName: planned.name,
    targetId,
    fields,
    secrets: converge.secretsWritten(entry),
    before: current.before ?? held(converge.imageOf(current.connection as Connection)),
    source: {
      load: () => {
        const { body, secretsSent } = converge.updateBody(prepared());
        return { body, image: converge.imageOf(body), secretsSent };
      },
    },
  });
}

/** The connection kind, as the engine sees it. */
export const connectionKind: SyncKind<ImportPlan, ConnectionRun> = {
  object: 'connection',
  label: 'connection',
  writer: connectionWriter,

  // import
  startImport: startConnectionImport,
  planKey: 'plan',
  planText: (plan) => plan.steps.flatMap((s) => describeStep(s).split('\n')),
  planTotals: (plan) => plan.counts,
  planJson,
  planMarkdown,
  runImport: runConnectionImport,
  report: (plan, outcomes = new Map()) => {
    const report = buildReport(plan, outcomes as ReadonlyMap<string, WriteOutcome>);
    return { report, counts: countOutcomes(report) };
  },
  *reportRecords({ report }, run) {
    for (const l of report) yield { object: 'connection', run, ...l };
  },
  summary: ({ report }, target) => formatSummary(report, target),
  runJson: ({ report, counts }) => ({
    head: { counts },
    tail: { failures: report.filter((l) => l.outcome === 'failed') },
  }),
  failed: ({ counts }) => (counts.failed > 0 ? countOf(counts.failed, 'entry', 'entries') : undefined),
  changes: (plan) => plan.changes,
  preflight: connectionPreflight,
  share: ({ counts, changes, steps }) => ({
    done: counts.done,
    inDoubt: counts.reconcile,
    sends: changes,
    total: steps.length,
  }),
  idMap: ({ report }) => buildIdMap(report),

  // undo
  // Streamed, not kept: 100 000 connections are planned as the listing hands them out.
  current: (client, signal) => listConnections(client, { signal }),
  undo: planConnectionUndo,
  runsKey: 'connections',
};
