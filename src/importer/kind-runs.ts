/**
 * Each kind's import run, which its descriptor (`runImport`) names: its steps handed to the executor
 * (`sync/execute.ts`), and what it hands on to the kinds after it ({@link ImportHandOn}). Connections:
 * creates, then updates, then deletes (the most destructive last); under `--on-conflict update`, a
 * create answered "someone else's" (`exists`) is read and planned again as an existing connection (the
 * planner's comparison): its update, if it differs, joins the updates. Scan profiles, once every
 * connection has settled: one at a time (they name connections by id, read again then).
 */
import { connectionIdsByName, getConnectionByName } from '../api/connections.js';
import type { HttpClient } from '../api/http.js';
import type { RetryBudget } from '../api/retry-policy.js';
import type { DdsError } from '../errors.js';
import type { Connection } from '../model/connection.js';
import { stripProfileServerFields } from '../profiles/server-fields.js';
import {
  type ExecuteDeps,
  executeSteps,
  StepRefused,
  type WriteOutcome,
  type WritePayload,
} from '../sync/execute.js';
import type { JournalObject } from '../sync/journal/records.js';
import {
  type ChangeStep,
  type ImportPlan,
  isChangeStep,
  isSendStep,
  type PlanStep,
  type SendStep,
} from '../sync/kinds/connection.js';
import type { ProfilePlan, ProfileSendStep, ProfileStep } from '../sync/kinds/scan-profile.js';
import { placeProfileBody } from '../sync/kinds/scan-profile.js';
import type { OnConflict } from '../sync/plan.js';
import { Write } from '../sync/step.js';
import type { ProfileOutcome } from './outputs.js';

/** A connection step of the plan as the executor runs it. */
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

/** A profile step the executor runs: a request, or an in-doubt create the target's list showed. */
type ProfileWriteStep = ProfileSendStep | Extract<ProfileStep, { kind: 'done' }>;

/** True for profile steps the executor runs (a `done` one is looked up and recorded). */
export function isProfileWrite(step: ProfileStep): step is ProfileWriteStep {
  return (
    step.kind === 'create' ||
    step.kind === 'update' ||
    step.kind === 'delete' ||
    (step.kind === 'done' && step.via === 'lookup')
  );
}

/** The number of profile requests a plan makes (creates, updates, deletes). */
export function countProfileWrites(plan: ProfilePlan): number {
  return plan.steps.filter((s) => s.kind === 'create' || s.kind === 'update' || s.kind === 'delete').length;
}

function profileWrite(step: ProfileWriteStep): Write<ProfileWriteStep> {
  const done = step.kind === 'done';
  return new Write(step, {
    object: 'scan-profile',
    op: done ? 'create' : step.kind,
    name: step.name,
    targetName: step.targetName,
    targetId: step.kind === 'create' ? undefined : step.targetId,
    inDoubt: done,
    intentAt: done ? step.intentAt : undefined,
    firstAttempt: done ? 1 : step.attempt,
  });
}

/** A profile's payload, its `dataSourceList` placed on the target's connection ids `ids`. */
function loadProfile(step: ProfileWriteStep, ids: ReadonlyMap<string, string | undefined>): WritePayload {
  if (step.kind === 'delete') return { before: step.before };
  if (step.kind === 'done')
    throw new StepRefused('no longer in the target after an interrupted request; re-run to create it');
  const body = placeProfileBody(
    { ...stripProfileServerFields(step.profile), name: step.targetName },
    step.dataSources,
    ids,
    ' (was its creation refused?)',
  );
  const image = { scanProfile: body, dataSourceNames: step.dataSources.map((d) => d.targetName) };
  return step.kind === 'update' ? { body, image, before: step.before } : { body, image };
}

/** What a kind's import run is handed: the executor's dependencies and the run's options. */
export interface KindImportRun {
  readonly deps: ExecuteDeps;
  readonly onConflict: OnConflict;
  readonly client: HttpClient;
  readonly budget: RetryBudget & { extend(n: number): void };
  readonly signal: AbortSignal;
  readonly concurrency: number;
  readonly onOutcome: (outcome: WriteOutcome) => void;
  /** Called before the kind's writes start, when they wait on earlier kinds (with its number of writes). */
  readonly onStarted: (sends: number) => void;
}

/**
 * What an earlier kind hands on to later ones, by its object tag: the names (in the target) of objects
 * the run was to create but did not, and the ids the target has now by name, read when first asked.
 */
export interface ImportHandOn {
  readonly notCreated: ReadonlySet<string>;
  readonly ids: () => Promise<ReadonlyMap<string, string | undefined>>;
}

/** One kind's import run: its outcomes, its plan as run, what it hands on, why it stopped. */
export interface KindImportResult<P> {
  readonly outcomes: ReadonlyMap<unknown, unknown>;
  readonly plan: P;
  readonly handOn?: ImportHandOn;
  readonly stoppedBy: DdsError | undefined;
}

/** The connection kind's import run: creates, updates, deletes (see the module comment). */
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
        const found = await getConnectionByName(client, c.targetName, { signal: input.signal });
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
  // A profile naming a connection this run was to create but did not (failed, or someone else's
  // meanwhile) is not created: it would point at an object this run did not make or match.
  // One found equal (`update`: unchanged, or updated here) is matched, as a planned existing one is.
  const notCreated = new Set(
    creates
      .filter(
        (c) => connections.get(c.name)?.kind !== 'applied' && replanned.get(c.name)?.kind !== 'unchanged',
      )
      .map((c) => c.targetName),
  );
  let ids: Promise<ReadonlyMap<string, string | undefined>> | undefined;
  const handOn = { notCreated, ids: () => (ids ??= connectionIdsByName(client, input.signal)) };
  return { outcomes: connections, plan: asRun, handOn, stoppedBy };
}

/** The scan profile kind's import run: one at a time, after the connections (see the module comment). */
export async function runProfileImport(
  plan: ProfilePlan,
  input: KindImportRun,
  earlier: ReadonlyMap<JournalObject, ImportHandOn>,
): Promise<KindImportResult<ProfilePlan>> {
  const connections = earlier.get('connection');
  const profiles = new Map<number, ProfileOutcome>();
  const profileSteps: Write<ProfileWriteStep>[] = [];
  const planIndex: number[] = [];
  plan.steps.forEach((step, i) => {
    if (!isProfileWrite(step)) return;
    const blocked =
      step.kind === 'create' || step.kind === 'update'
        ? step.dataSources.find((d) => connections?.notCreated.has(d.targetName))
        : undefined;
    if (blocked !== undefined) {
      profiles.set(i, {
        kind: 'skipped',
        reason: `connection '${blocked.targetName}' was not created by this import (failed, or created by someone else meanwhile)`,
      });
      return;
    }
    profileSteps.push(profileWrite(step));
    planIndex.push(i);
  });
  if (profileSteps.length === 0) return { outcomes: profiles, plan, stoppedBy: undefined };
  input.budget.extend(Math.max(10, Math.ceil(profileSteps.length / 10)));
  input.onStarted(countProfileWrites(plan));
  const ids = await (connections?.ids() ?? connectionIdsByName(input.client, input.signal));
  // One at a time: a one-time profile starts a scan, so nothing is sent in parallel.
  const result = await executeSteps(profileSteps, input.deps, {
    concurrency: 1,
    load: (w) => loadProfile(w.plan, ids),
  });
  for (const [k, outcome] of result.outcomes.entries()) profiles.set(planIndex[k] as number, outcome);
  return { outcomes: profiles, plan, stoppedBy: result.stoppedBy };
}
