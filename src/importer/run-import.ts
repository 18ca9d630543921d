/**
 * The writing part of an import: the plan's steps handed to the executor (`sync/execute.ts`) in this
 * order: connection creates, then updates, then deletes (the most destructive last), then, once every
 * connection has settled, scan profiles one at a time (they name connections by id, read again then).
 * Under `--on-conflict update`, a create answered "someone else's" (`exists`) is read and planned again
 * as an existing connection (the planner's comparison): its update, if it differs, joins the updates.
 */
import { getConnectionByName } from '../api/connections.js';
import type { HttpClient, RetryBudget } from '../api/http.js';
import type { DdsError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Connection } from '../model/connection.js';
import { stripProfileServerFields } from '../profiles/server-fields.js';
import {
  type ExecuteDeps,
  executeSteps,
  StepRefused,
  type WriteOutcome,
  type WritePayload,
  type WriteStep,
} from '../sync/execute.js';
import type { Journal } from '../sync/journal/writer.js';
import { connectionWriter, readConnectionIds } from '../sync/kinds/connection.js';
import { placeProfileBody, scanProfileWriter } from '../sync/kinds/scan-profile.js';
import type { Clock, RateLimiter } from '../sync/throttle.js';
import type { ProfileOutcome } from './outputs.js';
import {
  type ChangeStep,
  type ImportPlan,
  isChangeStep,
  isSendStep,
  type OnConflict,
  type PlanStep,
  type SendStep,
} from './plan.js';
import type { ProfilePlan, ProfileStep } from './profile-plan.js';

/** A connection step of the plan as the executor runs it (a class: one shape for 100 000 of them). */
class ConnectionWrite implements WriteStep {
  readonly object = 'connection';
  readonly op: 'create' | 'update' | 'delete';
  readonly name: string;
  readonly targetName: string;
  readonly targetId: string | undefined;
  readonly sourceId: string | undefined;
  readonly inDoubt: boolean;
  readonly intentAt: string | undefined;
  readonly whenTaken: 'exists' | 'failure';

  constructor(
    readonly plan: SendStep | ChangeStep,
    onConflict: OnConflict,
  ) {
    // A name someone creates after the listing is what the plan would have seen as existing.
    this.whenTaken =
      plan.kind !== 'rename' && (onConflict === 'skip' || onConflict === 'update') ? 'exists' : 'failure';
    this.op = plan.kind === 'update' || plan.kind === 'delete' ? plan.kind : 'create';
    this.name = plan.name;
    this.targetName = plan.targetName;
    this.targetId = 'targetId' in plan ? plan.targetId : undefined;
    this.sourceId = plan.sourceId;
    this.inDoubt = plan.kind === 'reconcile';
    this.intentAt = plan.kind === 'reconcile' ? plan.intentAt : undefined;
  }

  load(): WritePayload {
    const step = this.plan;
    switch (step.kind) {
      case 'update':
        return { ...step.source.load(), before: step.before.load() };
      case 'delete':
        return { before: step.before.load() };
      default:
        return step.source.load();
    }
  }
}

/** A scan profile step of the plan as the executor runs it. */
class ProfileWrite implements WriteStep {
  readonly object = 'scan-profile';
  readonly op: 'create' | 'update' | 'delete';
  readonly name: string;
  readonly targetName: string;
  readonly targetId: string | undefined;
  readonly inDoubt: boolean;
  readonly intentAt: string | undefined;
  readonly firstAttempt: number;

  constructor(
    readonly plan: ProfileStep,
    readonly index: number,
    private readonly connectionIds: () => ReadonlyMap<string, string | undefined>,
  ) {
    if (plan.kind === 'done') {
      // An in-doubt create the target's list showed: the executor looks it up and records it.
      this.op = 'create';
      this.inDoubt = true;
      this.intentAt = plan.intentAt;
      this.firstAttempt = 1;
      this.targetId = plan.targetId;
    } else if (plan.kind === 'create' || plan.kind === 'update' || plan.kind === 'delete') {
      this.op = plan.kind;
      this.inDoubt = false;
      this.firstAttempt = plan.attempt;
      this.targetId = plan.kind === 'create' ? undefined : plan.targetId;
    } else {
      throw new Error(`not a writing profile step: ${plan.kind}`);
    }
    this.name = plan.name;
    this.targetName = plan.targetName;
  }

  load(): WritePayload {
    const step = this.plan;
    if (step.kind === 'delete') return { before: step.before };
    if (step.kind !== 'create' && step.kind !== 'update')
      throw new StepRefused('no longer in the target after an interrupted request; re-run to create it');
    const body = placeProfileBody(
      { ...stripProfileServerFields(step.profile), name: step.targetName },
      step.dataSources,
      this.connectionIds(),
      ' (was its creation refused?)',
    );
    const image = { scanProfile: body, dataSourceNames: step.dataSources.map((d) => d.targetName) };
    return step.kind === 'update' ? { body, image, before: step.before } : { body, image };
  }
}

/** True for profile steps the executor runs. */
export function isProfileWrite(step: ProfileStep): boolean {
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

/** What {@link runImportSteps} needs. */
export interface RunImportInput {
  readonly plan: ImportPlan;
  readonly profilePlan: ProfilePlan;
  readonly onConflict: OnConflict;
  readonly client: HttpClient;
  readonly journal: Journal;
  readonly run: number;
  readonly limiter: RateLimiter;
  readonly budget: RetryBudget & { extend(n: number): void };
  readonly log: Logger;
  readonly signal: AbortSignal;
  readonly clock?: Clock;
  readonly concurrency: number;
  readonly onOutcome: (outcome: WriteOutcome) => void;
  /** Called before the profile steps start (after the connections). */
  readonly onProfilesStarted: (sends: number) => void;
  /** Plan again, as existing, the entries of connections someone else created meanwhile (`update`). */
  readonly replan?: (found: readonly Connection[]) => ImportPlan;
}

/** What the run did: connection outcomes by name, profile outcomes by plan index, why it stopped. */
export interface RunImportResult {
  readonly connections: ReadonlyMap<string, WriteOutcome>;
  readonly profiles: ReadonlyMap<number, ProfileOutcome>;
  readonly stoppedBy: DdsError | undefined;
  /** The plan as run: a create that met someone else's connection replaced by its second plan. */
  readonly plan?: ImportPlan;
}

/** Run the plan's writes (see the module comment). */
export async function runImportSteps(input: RunImportInput): Promise<RunImportResult> {
  const { plan, profilePlan, client } = input;
  const deps: ExecuteDeps = {
    writers: { connection: connectionWriter(client), 'scan-profile': scanProfileWriter(client) },
    journal: input.journal,
    run: input.run,
    limiter: input.limiter,
    budget: input.budget,
    log: input.log,
    signal: input.signal,
    ...(input.clock ? { clock: input.clock } : {}),
    onOutcome: input.onOutcome,
  };
  const connections = new Map<string, WriteOutcome>();
  const write = (s: SendStep | ChangeStep) => new ConnectionWrite(s, input.onConflict);
  const creates = plan.steps.filter(isSendStep).map(write);
  const changes = plan.steps.filter(isChangeStep);
  const phases = [
    creates,
    changes.filter((s) => s.kind === 'update').map(write),
    changes.filter((s) => s.kind === 'delete').map(write),
  ];
  const replanned = new Map<string, PlanStep>();
  let asRun = plan;
  for (const [i, phase] of phases.entries()) {
    if (i === 1 && input.replan !== undefined && input.onConflict === 'update') {
      const taken: Connection[] = [];
      for (const c of creates) {
        if (connections.get(c.name)?.kind !== 'exists') continue;
        const found = await getConnectionByName(client, c.targetName, { signal: input.signal });
        if (found !== undefined) taken.push(found);
      }
      for (const step of taken.length > 0 ? input.replan(taken).steps : []) {
        replanned.set(step.name, step);
        if (step.kind === 'update') phase.unshift(write(step));
      }
      asRun = { ...plan, steps: plan.steps.map((s) => (isSendStep(s) && replanned.get(s.name)) || s) };
    }
    if (phase.length === 0) continue;
    const result = await executeSteps(phase, deps, { concurrency: input.concurrency });
    for (const outcome of result.outcomes) connections.set(outcome.step.name, outcome);
    if (result.stoppedBy !== undefined)
      return { connections, profiles: new Map(), stoppedBy: result.stoppedBy, plan: asRun };
  }

  const profiles = new Map<number, ProfileOutcome>();
  let ids: Map<string, string | undefined> | undefined;
  const connectionIds = () => {
    if (ids === undefined) throw new Error('connection ids not read');
    return ids;
  };
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
  const profileSteps: ProfileWrite[] = [];
  profilePlan.steps.forEach((step, i) => {
    if (!isProfileWrite(step)) return;
    const blocked =
      step.kind === 'create' || step.kind === 'update'
        ? step.dataSources.find((d) => notCreated.has(d.targetName))
        : undefined;
    if (blocked !== undefined) {
      profiles.set(i, {
        kind: 'skipped',
        reason: `connection '${blocked.targetName}' was not created by this import (failed, or created by someone else meanwhile)`,
      });
      return;
    }
    profileSteps.push(new ProfileWrite(step, i, connectionIds));
  });
  if (profileSteps.length === 0) return { connections, profiles, stoppedBy: undefined, plan: asRun };
  input.budget.extend(Math.max(10, Math.ceil(profileSteps.length / 10)));
  input.onProfilesStarted(countProfileWrites(profilePlan));
  ids = await readConnectionIds(client, input.signal);
  // One at a time: a one-time profile starts a scan, so nothing is sent in parallel.
  const result = await executeSteps(
    profileSteps,
    { ...deps, onOutcome: () => undefined },
    { concurrency: 1 },
  );
  for (const outcome of result.outcomes) profiles.set(outcome.step.index, outcome);
  return { connections, profiles, stoppedBy: result.stoppedBy, plan: asRun };
}
