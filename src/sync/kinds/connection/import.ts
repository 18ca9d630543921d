/** The connection kind's import: its reads of the target, its plan, its run and its report. */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { connectionIdsByName, getConnectionByName, listConnectionPages } from '../../../api/connections.js';
import type { HttpClient } from '../../../api/http.js';
import {
  checkEntryReferences,
  createReferenceCollector,
  describeReferenceWarnings,
  describeSourceIdDrops,
  type ReferencingEntry,
  type TargetReferences,
} from '../../../connections/references.js';
import { countOf } from '../../../display-name.js';
import type { DdsError, Problem } from '../../../errors.js';
import {
  type ImportStart,
  type KindImportResult,
  type KindImportRun,
  type KindPlanner,
  type KindPlanResult,
  quiet,
} from '../../../importer/kind-import.js';
import { countLines, type FailedLine, type InvalidLine, summaryText } from '../../../importer/outputs.js';
import { checkEntryForSend, formatWarning } from '../../../importer/preflight.js';
import { bothSelections, checkOnly, snapshotScope } from '../../../importer/selection.js';
import type { SecretWritten } from '../../../importer/source.js';
import type { Connection } from '../../../model/connection.js';
import { scrub } from '../../../secrets.js';
import { fetchTargetReferences } from '../../../validate/target-references.js';
import { executeSteps, type WriteOutcome, type WritePayload } from '../../execute.js';
import { writesOf } from '../../journal/replay.js';
import type { OnConflict } from '../../plan.js';
import { Write } from '../../step.js';
import { type ConvergeHelpers, createConvergeHelpers, targetSummarizer } from './converge.js';
import {
  type ChangeStep,
  type ImportPlan,
  isChangeStep,
  isSendStep,
  type JournaledWrite,
  type PlanEntry,
  type PlanStep,
  planImport,
  type SendStep,
  type TargetConnection,
} from './kind.js';

/** Starts the target's reads now (converging, each connection compared as its page arrives). */
export function startConnectionImport(start: ImportStart): KindPlanner<ImportPlan> {
  const { options, lean, prepare, catalog } = start;
  const converging = options.onConflict === 'update' || options.prune === true;
  const converge = converging ? createConvergeHelpers(catalog, start.overrides) : undefined;
  const summarize = converge && targetSummarizer(lean.entries, prepare, options, converge);
  const listing = quiet(listTarget(start.client, start.signal, summarize));
  // Scanner groups and stored credentials the target holds (a 404 leaves that kind unchecked).
  const referencesRead = quiet(fetchTargetReferences(start.client, start.signal));
  return async (continuing, renamed) => {
    const journal = writesOf(continuing, 'connection');
    // The template schemas of the entries still to create are compiled while the reads are out.
    await nextTurn();
    const typesToCheck = new Set<string>();
    for (const entry of lean.entries) {
      const written = journal.get(entry.name);
      if (written?.op !== 'create' || written.state !== 'done') typesToCheck.add(entry.type);
    }
    catalog.compile(typesToCheck);
    const target = await listing;
    const profileNames = lean.profiles.map((p) => p.scanProfile.name);
    // With --prune, a name the run being finished deleted is in neither the snapshot nor the target now.
    if (options.prune)
      checkOnly(options.only, [...lean.entries, ...target, ...journal.values()], profileNames);
    const targetReferences = await referencesRead;
    return () => planConnections(start, converge, journal, target, targetReferences, renamed);
  };
}

/** Names and ids, or what `summarize` keeps of each connection as its page arrives. */
async function listTarget(
  client: HttpClient,
  signal: AbortSignal,
  summarize = (c: Connection): TargetConnection => ({
    name: c.name,
    _id: typeof c._id === 'string' ? c._id : undefined,
  }),
): Promise<TargetConnection[]> {
  const out: TargetConnection[] = [];
  for await (const page of listConnectionPages(client, { signal }))
    for (const c of page) out.push(summarize(c));
  return out;
}

/** The connection plan, once the target is read: its warnings told, its hand-on. */
function planConnections(
  start: ImportStart,
  converge: ConvergeHelpers | undefined,
  journal: ReadonlyMap<string, JournaledWrite>,
  target: readonly TargetConnection[],
  targetReferences: TargetReferences,
  renamed: ReadonlyMap<string, string>,
): KindPlanResult<ImportPlan> {
  const { options, lean, prepare, catalog } = start;
  const warnings = new Map<string, Problem>();
  // The references of the entries the run would send or refuses, for the warnings below.
  const references = createReferenceCollector();
  const referencing = new Set<string>();
  const noteReferences = (entry: ReferencingEntry): void => {
    references.add(entry);
    referencing.add(entry.name);
  };
  // An update's references are checked as a create's are, and a refused one's count among the run's.
  const checked: ConvergeHelpers | undefined = converge && {
    ...converge,
    checkUpdate: (entry) => {
      const problems = [...converge.checkUpdate(entry), ...checkEntryReferences(entry, targetReferences)];
      if (problems.length > 0) noteReferences(entry);
      return problems;
    },
  };
  const input: Parameters<typeof planImport>[0] = {
    entries: lean.entries,
    prepare,
    target,
    journal,
    onConflict: options.onConflict,
    renamed,
    // Within the snapshot's own selection too (export --type, --name): its entries all are.
    only: bothSelections(options.only, snapshotScope(lean.verified.header.selection)),
    // A snapshot without connections says nothing about them: none is pruned.
    prune: options.prune === true && lean.verified.header.include.includes('connections'),
    ...(checked ? { converge: checked } : {}),
    check: (_entry, prepared) => {
      const body = prepared();
      const checked = checkEntryForSend(body, catalog);
      noteReferences(body);
      for (const w of checked.warnings) {
        const line = formatWarning(w);
        if (!warnings.has(line)) warnings.set(line, w);
      }
      return [...checked.problems, ...checkEntryReferences(body, targetReferences)];
    },
  };
  const planned = planImport(input);
  const { onEvent, sourceIdChanges } = start;
  if (warnings.size > 0) onEvent({ kind: 'template-warnings', warnings: [...warnings.values()] });
  // Kinds the target could not list, certificates (never checkable), source-environment ids dropped.
  const referenceWarnings = [
    ...describeReferenceWarnings(references.needs(), targetReferences),
    ...describeSourceIdDrops(new Map([...sourceIdChanges].filter(([name]) => referencing.has(name)))),
  ];
  if (referenceWarnings.length > 0) onEvent({ kind: 'reference-warnings', messages: referenceWarnings });
  const replan = (found: Parameters<NonNullable<ImportPlan['replan']>>[0]) => {
    const names = new Set(found.map((c) => c.name));
    const entries = lean.entries.filter((e) => names.has(e.name));
    const listed = found.map((c) => ({ name: c.name, _id: c._id, connection: c }));
    return planImport({ ...input, entries, target: listed, journal: new Map(), prune: false });
  };
  const created = new Map<string, string>();
  for (const step of planned.steps)
    if (isSendStep(step) || step.kind === 'done') created.set(step.name, step.targetName);
  return { plan: { ...planned, replan }, handOn: { listed: target, created } };
}

function connectionWrite(step: SendStep | ChangeStep, onConflict: OnConflict): Write<SendStep | ChangeStep> {
  return new Write(step, {
    object: 'connection',
    op: isChangeStep(step) ? step.kind : 'create',
    name: step.name,
    targetName: step.targetName,
    targetId: isChangeStep(step) ? step.targetId : undefined,
    sourceId: step.sourceId,
    inDoubt: step.kind === 'reconcile',
    intentAt: step.kind === 'reconcile' ? step.intentAt : undefined,
    // A name someone creates after the listing is what the plan would have seen as existing.
    whenTaken:
      step.kind !== 'rename' && (onConflict === 'skip' || onConflict === 'update') ? 'exists' : 'failure',
  });
}

function loadConnection({ plan }: Write<SendStep | ChangeStep>): WritePayload {
  if (plan.kind === 'update') return { ...plan.source.load(), before: plan.before.load() };
  return plan.kind === 'delete' ? { before: plan.before.load() } : plan.source.load();
}

/**
 * Creates, then updates, then deletes (the most destructive last). Under `--on-conflict update` a
 * create answered "someone else's" is read and planned again as existing: its update joins the updates.
 */
export async function runConnectionImport(
  plan: ImportPlan,
  input: KindImportRun,
): Promise<KindImportResult<ImportPlan>> {
  const { deps, client } = input;
  const connections = new Map<string, WriteOutcome>();
  const write = (s: SendStep | ChangeStep) => connectionWrite(s, input.onConflict);
  const creates = plan.steps.filter(isSendStep).map(write);
  const changes = plan.steps.filter(isChangeStep);
  const phases = [
    creates,
    changes.filter((s) => s.kind === 'update').map(write),
    changes.filter((s) => s.kind === 'delete').map(write),
  ];
  const replanned = new Map<string, PlanStep>();
  let asRun = plan;
  let stoppedBy: DdsError | undefined;
  for (const [i, phase] of phases.entries()) {
    if (i === 1 && plan.replan !== undefined && input.onConflict === 'update') {
      const taken: Connection[] = [];
      for (const c of creates) {
        if (connections.get(c.name)?.kind !== 'exists') continue;
        const found = await getConnectionByName(client, c.targetName, { signal: deps.signal });
        if (found !== undefined) taken.push(found);
      }
      for (const step of taken.length > 0 ? plan.replan(taken).steps : []) {
        replanned.set(step.name, step);
        if (step.kind === 'update') phase.unshift(write(step));
      }
      asRun = { ...plan, steps: plan.steps.map((s) => (isSendStep(s) && replanned.get(s.name)) || s) };
    }
    if (phase.length === 0) continue;
    const result = await executeSteps(phase, deps, {
      concurrency: input.concurrency,
      load: loadConnection,
      onOutcome: input.onOutcome,
    });
    for (const outcome of result.outcomes) connections.set(outcome.step.name, outcome);
    stoppedBy = result.stoppedBy;
    if (stoppedBy !== undefined) break;
  }
  // A profile naming a connection this run was to create but did not (failed, or someone else's) is not
  // created; one found equal (`update`: unchanged, or updated here) is matched, as an existing one is.
  const notCreated = new Set<string>();
  for (const c of creates)
    if (connections.get(c.name)?.kind !== 'applied' && replanned.get(c.name)?.kind !== 'unchanged')
      notCreated.add(c.targetName);
  let ids: Promise<ReadonlyMap<string, string | undefined>> | undefined;
  const handOn = { notCreated, ids: () => (ids ??= connectionIdsByName(client, deps.signal)) };
  return { outcomes: connections, plan: asRun, handOn, stoppedBy };
}

/** One line of `--report`: the outcome of one snapshot entry. */
export type ReportLine = { readonly name: string; readonly type: string } & (
  | {
      readonly outcome: 'created' | 'renamed';
      readonly targetName: string;
      readonly sourceId: string | undefined;
      readonly targetId: string | undefined;
      readonly earlierRun: boolean;
      /** Found on the target after an in-doubt POST, not by the POST's answer. */
      readonly reconciled: boolean;
    }
  | {
      readonly outcome: 'updated';
      readonly sourceId: string | undefined;
      readonly targetId: string | undefined;
      /** JSON pointers; empty when an earlier run updated it. */
      readonly fields: readonly string[];
      readonly secretsWritten: readonly SecretWritten[];
      readonly earlierRun: boolean;
    }
  | {
      readonly outcome: 'deleted';
      readonly targetId: string | undefined;
      readonly earlierRun: boolean;
    }
  | {
      readonly outcome: 'unchanged' | 'exists';
      readonly sourceId: string | undefined;
      readonly targetId: string | undefined;
      /** Someone else created it while this run was writing (its create was refused). */
      readonly meanwhile?: boolean;
      /** `not ours`: the create was in doubt and the object found was created before the request. */
      readonly createdAt?: string;
    }
  | FailedLine
  | InvalidLine
  | {
      /** Not settled when the run stopped (Ctrl-C, budget, 401); a re-run finishes it. */
      readonly outcome: 'pending';
      readonly targetName: string;
      readonly inDoubt: boolean;
    }
);

/** The id map: source `_id` -> target name and `_id`. */
export type IdMap = Record<string, { readonly name: string; readonly targetId: string }>;

/** A report line: the step's name and type, then its own (`Object.assign`: see `stepOf` in `kind.ts`). */
function lineOf<const T extends object>(step: PlanEntry, own: T) {
  return Object.assign({ name: step.name, type: step.type }, own);
}

/** One report line per entry, in name order. */
export function buildReport(plan: ImportPlan, outcomes: ReadonlyMap<string, WriteOutcome>): ReportLine[] {
  return plan.steps.map((step) => reportLine(step, outcomes.get(step.name)));
}

type WritingStep = Extract<PlanStep, { readonly targetName: string }>;

function appliedLine(
  step: WritingStep,
  op: 'create' | 'update' | 'delete',
  targetId: string | undefined,
  earlierRun: boolean,
  reconciled: boolean,
): ReportLine {
  const { targetName, sourceId } = step;
  if (op === 'update') {
    const fields = step.kind === 'update' ? step.fields.map((f) => f.path) : [];
    const secretsWritten = step.kind === 'update' ? step.secrets : [];
    return lineOf(step, { outcome: 'updated', sourceId, targetId, fields, secretsWritten, earlierRun });
  }
  if (op === 'delete') return lineOf(step, { outcome: 'deleted', targetId, earlierRun });
  const outcome = targetName === step.name ? 'created' : 'renamed';
  return lineOf(step, { outcome, targetName, sourceId, targetId, earlierRun, reconciled });
}

function reportLine(step: PlanStep, outcome: WriteOutcome | undefined): ReportLine {
  switch (step.kind) {
    case 'unchanged':
      return lineOf(step, { outcome: 'unchanged', sourceId: step.sourceId, targetId: step.targetId });
    case 'done':
      return appliedLine(step, step.op ?? 'create', step.targetId, true, false);
    case 'exists':
    case 'conflict':
      return lineOf(step, { outcome: 'exists', sourceId: step.sourceId, targetId: step.targetId });
    case 'invalid':
      return lineOf(step, { outcome: 'invalid', problems: step.problems });
  }
  const op = step.kind === 'update' || step.kind === 'delete' ? step.kind : 'create';
  if (outcome === undefined || outcome.kind === 'pending') {
    const inDoubt = outcome === undefined ? step.kind === 'reconcile' : outcome.inDoubt;
    return lineOf(step, { outcome: 'pending', targetName: step.targetName, inDoubt });
  }
  if (outcome.kind === 'applied') {
    const targetId = 'targetId' in step ? step.targetId : outcome.targetId;
    return appliedLine(step, op, targetId, false, outcome.via === 'lookup');
  }
  // Created by someone else after the target was listed: existing, not this run's.
  if (outcome.kind === 'exists' && op === 'create')
    return lineOf(step, {
      outcome: 'exists',
      sourceId: step.sourceId,
      targetId: outcome.targetId,
      meanwhile: true,
      ...(outcome.createdAt === undefined ? {} : { createdAt: outcome.createdAt }),
    });
  return lineOf(step, {
    outcome: 'failed',
    targetName: step.targetName,
    httpStatus: outcome.kind === 'failed' ? outcome.httpStatus : undefined,
    message: outcome.kind === 'failed' ? scrub(outcome.message) : 'created by someone else meanwhile',
  });
}

/** The id map: every entry with a source `_id` and a counterpart in the target, for scan profiles. */
export function buildIdMap(report: readonly ReportLine[]): IdMap {
  const map: IdMap = {};
  for (const line of report) {
    if (!('sourceId' in line) || !line.sourceId || !line.targetId) continue;
    const name = 'targetName' in line ? line.targetName : line.name;
    map[line.sourceId] = { name, targetId: line.targetId };
  }
  return map;
}

/** Counts per outcome, for the summary and `--json`. */
export function countOutcomes(
  report: readonly ReportLine[],
): Record<ReportLine['outcome'], number> & { earlierRun: number } {
  const counts = countLines(report, {
    created: 0,
    renamed: 0,
    updated: 0,
    deleted: 0,
    unchanged: 0,
    exists: 0,
    failed: 0,
    invalid: 0,
    pending: 0,
  });
  return { ...counts, earlierRun: report.filter((l) => 'earlierRun' in l && l.earlierRun).length };
}

/** The connections' summary: counts, then each failure with its HTTP status and message. */
export function formatSummary(report: readonly ReportLine[], targetLabel: string): string {
  const c = countOutcomes(report);
  const done = c.updated + c.deleted > 0 ? 'done' : 'created or renamed';
  const earlier = c.earlierRun > 0 ? `(${c.earlierRun} ${done} by an earlier run)` : '';
  const rows: [string, number, string][] = [
    ['created', c.created, earlier],
    ['renamed', c.renamed, ''],
  ];
  // The converge rows only when there are any: a create-only summary stays short.
  if (c.updated + c.deleted + c.unchanged > 0) {
    rows.push(['updated', c.updated, ''], ['deleted', c.deleted, ''], ['unchanged', c.unchanged, '']);
  }
  const notOurs = report.filter((l) => l.outcome === 'exists' && l.createdAt !== undefined).length;
  const whose = notOurs > 0 ? `; ${notOurs} not ours: created by someone else before this run's request` : '';
  rows.push(
    ['existed', c.exists, `(already in the target, skipped${whose})`],
    ['failed', c.failed, ''],
    ['invalid', c.invalid, ''],
  );
  if (c.pending > 0) rows.push(['pending', c.pending, '(not settled: re-run to resume)']);
  const failures = report.flatMap((l) =>
    l.outcome === 'failed' ? [`  ${l.name}: HTTP ${l.httpStatus ?? '-'} ${l.message}`] : [],
  );
  return summaryText(
    `Import into ${targetLabel}: ${countOf(report.length, 'entry', 'entries')}`,
    rows,
    [8, 6],
    failures.length > 0 ? ['', 'Failures:', ...failures] : [],
  );
}

/** The plan's refused entries, conflicts and `--max-changes` excess. */
export function connectionPreflight(plan: ImportPlan, max: number | undefined): Problem[] {
  const problems: Problem[] = [];
  for (const step of plan.steps) {
    if (step.kind === 'invalid') problems.push(...step.problems);
    if (step.kind === 'conflict') {
      problems.push({
        entry: step.name,
        type: step.type,
        message:
          'already exists in the target (--on-conflict fail); use --on-conflict skip or rename, or --only',
      });
    }
  }
  const { changes, counts } = plan;
  if (max !== undefined && changes > max) {
    const { update: updates, delete: deletes } = counts;
    const what =
      updates + deletes === 0
        ? `${countOf(changes, 'connection')} would be created`
        : `${changes} changes would be made (${plan.sends} creates, ${updates} updates, ${deletes} deletes)`;
    problems.push({
      message: `${what}, more than --max-changes ${max}; raise --max-changes or narrow with --only`,
    });
  }
  return problems;
}

/** The connections' members of an import run's result. */
export interface ConnectionRun {
  readonly report: readonly ReportLine[];
  readonly counts: ReturnType<typeof countOutcomes>;
}
