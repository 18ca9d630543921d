/** The connection kind (`/ds_connections`: spec 4.x, api-notes [code]): its steps, rules, descriptor. */
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
import type { KindWriter, SettledOutcome, WriteOutcome, WritePayload } from '../../execute.js';
import type { SafeImage } from '../../journal/records.js';
import type { WriteState } from '../../journal/replay.js';
import type { SyncKind } from '../../kind.js';
import { countSteps, type Decision, type OnConflict, planKind } from '../../plan.js';
import { observedOutcome } from '../../step.js';
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

function connectionWriter(client: HttpClient): KindWriter {
  return {
    create: async (body) => (await createConnection(client, { ...body }))._id,
    update: (target, body) => updateConnection(client, target.targetName, { ...body }),
    remove: (target) => deleteConnection(client, target.targetName),
    lookup: async (name, signal) => {
      const found = await getConnectionByName(client, name, { signal });
      const id = typeof found?._id === 'string' ? found._id : undefined;
      return found === undefined ? undefined : { id, createdAt: found.created_at };
    },
  };
}

/** A snapshot entry without its body, prepared again when checked and when sent: 100 000 stay small. */
export interface PlanEntry {
  readonly name: string;
  readonly type: string;
  /** `_id` in the source environment (for the id map). */
  readonly sourceId: string | undefined;
}

/** A snapshot entry ready to send: overrides applied, server-managed fields stripped. */
export interface PreparedEntry extends PlanEntry {
  readonly body: Readonly<Record<string, unknown>>;
  /** The body with every secret masked, for the journal. */
  readonly image?: SafeImage;
}

/** A target connection for planning: whole, or what {@link targetSummarizer} kept (small if unchanged). */
export interface TargetConnection {
  readonly name: string;
  readonly _id?: string | undefined;
  readonly connection?: Connection;
  readonly type?: string;
  /** The fields that differ from its snapshot entry, compared when listed (none: unchanged). */
  readonly compared?: readonly FieldChange[];
  readonly before?: ImageSource;
}

/** A step that sends a POST (maybe after a look-up). */
export interface SendStep extends PlanEntry {
  readonly kind: 'create' | 'rename' | 'reconcile';
  /** The name POSTed (for `reconcile`, the name its journaled intent used). */
  readonly targetName: string;
  /** The body and its masked image, prepared when sent: not held, so a plan of many creates stays small. */
  readonly source: Source<WritePayload>;
  readonly intentAt?: string | undefined;
}

/** A PUT of a connection that differs (`--on-conflict update`), or a DELETE of one not in the snapshot. */
export type ChangeStep =
  | (PlanEntry & {
      readonly kind: 'update';
      readonly targetName: string;
      readonly targetId: string | undefined;
      readonly fields: readonly FieldChange[];
      /** The secrets the PUT writes: the target's are masked, so never compared nor among `fields`. */
      readonly secrets: readonly SecretWritten[];
      readonly before: ImageSource;
      /** Prepared again when sent (a plan of 100 000 updates holding every body peaked at 638 MB). */
      readonly source: Source<WritePayload>;
    })
  | (PlanEntry & {
      readonly kind: 'delete';
      readonly targetName: string;
      readonly targetId: string | undefined;
      readonly before: ImageSource;
    });

export type PlanStep =
  | SendStep
  | ChangeStep
  | (PlanEntry & {
      readonly kind: 'exists' | 'unchanged' | 'conflict';
      readonly targetId: string | undefined;
    })
  | (PlanEntry & {
      readonly kind: 'done';
      readonly targetName: string;
      readonly targetId: string | undefined;
      /** Absent: created. */
      readonly op?: 'update' | 'delete';
      /** The run being finished left this update or delete in doubt; the target shows it applied. */
      readonly settles?: boolean;
    })
  | (PlanEntry & {
      readonly kind: 'invalid';
      readonly wouldBe: SendStep['kind'] | 'update';
      readonly targetName: string;
      readonly problems: readonly Problem[];
    });

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

export interface PlanInput {
  readonly entries: readonly PlanEntry[];
  /** Prepares an entry each time it is needed; default: the entry itself, then a {@link PreparedEntry}. */
  readonly prepare?: (entry: PlanEntry) => PreparedEntry;
  readonly target: readonly TargetConnection[];
  /** The run being finished: its last write of each connection, by name (none for a new run). */
  readonly journal: ReadonlyMap<string, JournaledWrite>;
  readonly onConflict: OnConflict;
  /** What earlier runs created under another name (`--on-conflict rename`), by the snapshot's name. */
  readonly renamed?: ReadonlyMap<string, string>;
  /** `--only`, `--type`; undefined = all. */
  readonly only?: NameSelection | undefined;
  /** Problems that would stop this entry being sent; `prepared` prepares it only when called. */
  readonly check: (entry: PlanEntry, prepared: () => PreparedEntry) => readonly Problem[];
  readonly prune?: boolean;
  /** What `--on-conflict update` and `--prune` need, injected so the plan stays pure. */
  readonly converge?: ConvergeHelpers;
}

/** The plan: steps in code-unit order of name, and counts per kind. */
export interface ImportPlan {
  readonly steps: readonly PlanStep[];
  readonly counts: Readonly<Record<PlanStepKind, number>>;
  /** Steps that will (or may, for `reconcile`) send a POST. */
  readonly sends: number;
  /** Creates, updates and deletes (what `--max-changes` counts). */
  readonly changes: number;
  /** Plans again, as existing, the connections someone else created meanwhile (`update`). */
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
 * The connection plan, by the planner's rules (`sync/plan.ts`) and these: a second entry of a name or a
 * send that fails its checks -> `invalid`; a create in doubt -> `reconcile` (looked up, when sent, by
 * the name its intent used); `--on-conflict update` -> `update` when a compared field differs, else
 * `unchanged`, or `done` when the run being finished updated it; a journaled delete gone -> `done`.
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
      removed: (name, { type = '', state }) =>
        stepOf(
          { name, type, sourceId: undefined },
          {
            kind: 'done',
            op: 'delete',
            targetName: name,
            targetId: undefined,
            settles: state === 'in-doubt',
          },
        ),
    },
    {
      desired: input.entries,
      actual: input.target,
      journal: input.journal,
      onConflict: input.onConflict,
      ...(input.renamed ? { renamed: input.renamed } : {}),
      only: input.only,
      prune: input.prune === true && converge !== undefined,
    },
  );
  const counts = countSteps(steps, PLAN_STEP_KINDS);
  const sends = counts.create + counts.rename + counts.reconcile;
  return { steps, counts, sends, changes: sends + counts.update + counts.delete };
}

/**
 * A step: the entry's fields (not a placed entry's `place`), then its own. Not a spread: V8 gives each
 * object a spread builds here a shape of its own (100 000 shapes outweigh the steps).
 */
function stepOf<const T extends object>(entry: PlanEntry, own: T): PlanEntry & T {
  return Object.assign({ name: entry.name, type: entry.type, sourceId: entry.sourceId }, own);
}

/** A send step's payload, renamed to `targetName` if need be. */
function preparedPayload(entry: PreparedEntry, targetName: string): WritePayload {
  if (targetName === entry.name) return { body: entry.body, image: entry.image };
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

/** An entry the target holds, under `--on-conflict update`; one compared when listed is not prepared. */
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
    if (written?.op === 'update' && written.state !== 'failed') {
      const settles = written.state === 'in-doubt';
      return stepOf(planned, { kind: 'done', op: 'update', targetName: planned.name, targetId, settles });
    }
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
  settled: (plan) =>
    plan.steps.flatMap((s): SettledOutcome[] => {
      if (s.kind !== 'done' || s.op === undefined || s.settles !== true) return [];
      const fields = { object: 'connection', op: s.op, name: s.name, targetName: s.targetName } as const;
      return [observedOutcome(s, fields, s.targetId)];
    }),
  preflight: connectionPreflight,
  share: ({ counts, changes, steps }) => ({
    done: counts.done,
    inDoubt: counts.reconcile,
    sends: changes,
    total: steps.length,
  }),
  idMap: ({ report }) => buildIdMap(report),

  // undo; streamed, not kept: 100 000 connections are planned as the listing hands them out.
  current: (client, signal) => listConnections(client, { signal }),
  undo: planConnectionUndo,
  runsKey: 'connections',
};
