/** The scan profile kind's import: its read of the target, its plan, its run and its report. */
import { connectionIdsByName } from '../../../api/connections.js';
import { listScanProfiles } from '../../../api/scan-profiles.js';
import { displayName } from '../../../display-name.js';
import { assertNever } from '../../../errors.js';
import {
  type ImportHandOn,
  type ImportStart,
  type KindImportResult,
  type KindImportRun,
  type KindPlanner,
  quiet,
} from '../../../importer/kind-import.js';
import { countLines, type FailedLine, type InvalidLine, summaryText } from '../../../importer/outputs.js';
import { stripProfileServerFields } from '../../../profiles/server-fields.js';
import { scrub } from '../../../secrets.js';
import { executeSteps, StepRefused, type WriteOutcome, type WritePayload } from '../../execute.js';
import type { JournalObject, JournalOp } from '../../journal/records.js';
import { writesOf } from '../../journal/replay.js';
import { Write } from '../../step.js';
import {
  type ProfilePlan,
  type ProfileSendStep,
  type ProfileStep,
  placeProfileBody,
  planProfiles,
} from './kind.js';

/** Lists the target's profiles now; plans after the connections. */
export function startProfileImport({ options, lean, client, signal }: ImportStart): KindPlanner<ProfilePlan> {
  const included = lean.verified.header.include.includes('scanProfiles');
  const listing = quiet(included ? listScanProfiles(client, { signal }) : Promise.resolve([]));
  return async (continuing, renamed) => {
    const targetProfiles = await listing;
    return (earlier) => {
      const connections = earlier.get('connection');
      const plan = planProfiles({
        profiles: lean.profiles,
        included,
        targetProfiles,
        targetConnections: connections?.listed ?? [],
        createdConnections: connections?.created ?? new Map(),
        journal: writesOf(continuing, 'scan-profile'),
        onConflict: options.profileOnConflict ?? options.onConflict,
        renamed,
        prune: options.prune === true,
        allowRun: options.allowRun === true,
        only: options.only,
      });
      return { plan };
    };
  };
}

/** A request, or an in-doubt create the target's list showed (looked up and recorded). */
type ProfileWriteStep = ProfileSendStep | Extract<ProfileStep, { kind: 'done' }>;

const REQUESTS: ReadonlySet<ProfileStep['kind']> = new Set(['create', 'update', 'delete']);

/** True for profile steps the executor runs. */
export function isProfileWrite(step: ProfileStep): step is ProfileWriteStep {
  return REQUESTS.has(step.kind) || (step.kind === 'done' && step.via === 'lookup');
}

/** The number of profile requests a plan makes (creates, updates, deletes). */
export function countProfileWrites(plan: ProfilePlan): number {
  return plan.steps.filter((s) => REQUESTS.has(s.kind)).length;
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

/** Runs once every connection has settled: profiles name connections by id, read again then. */
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
  const ids = await (connections?.ids() ?? connectionIdsByName(input.client, input.deps.signal));
  // One at a time: a one-time profile starts a scan, so nothing is sent in parallel.
  const result = await executeSteps(profileSteps, input.deps, {
    concurrency: 1,
    load: (w) => loadProfile(w.plan, ids),
  });
  for (const [k, outcome] of result.outcomes.entries()) profiles.set(planIndex[k] as number, outcome);
  return { outcomes: profiles, plan, stoppedBy: result.stoppedBy };
}

/** The executor's outcome, or not sent (and why). */
export type ProfileOutcome = WriteOutcome | { readonly kind: 'skipped'; readonly reason: string };

/** One `--report` line of a scan profile (`object: "scan profile"`). */
export type ProfileReportLine = {
  readonly object: 'scan profile';
  readonly name: string;
} & (
  | {
      readonly outcome: 'created' | 'renamed' | 'updated' | 'deleted';
      readonly targetName: string;
      readonly targetId: string | undefined;
      readonly earlierRun: boolean;
      readonly reconciled: boolean;
    }
  | { readonly outcome: 'exists' | 'unchanged'; readonly targetId: string | undefined }
  | { readonly outcome: 'skipped'; readonly reason: string }
  | FailedLine
  | InvalidLine
  | { readonly outcome: 'pending'; readonly targetName: string }
);

/** One report line per scan profile step. */
export function buildProfileReport(
  plan: ProfilePlan,
  outcomes: ReadonlyMap<number, ProfileOutcome>,
): ProfileReportLine[] {
  return plan.steps.map((step, index): ProfileReportLine => {
    const base = { object: 'scan profile' as const, name: step.name };
    const done = (op: JournalOp, targetName: string, targetId: string | undefined, via?: string) =>
      ({
        ...base,
        outcome: op === 'create' && targetName !== step.name ? 'renamed' : (`${op}d` as const),
        targetName,
        targetId,
        earlierRun: via === 'journal',
        reconciled: via === 'lookup',
      }) as const;
    switch (step.kind) {
      case 'done':
        return done(step.action, step.targetName, step.targetId, step.via);
      case 'exists':
      case 'unchanged':
        return { ...base, outcome: step.kind, targetId: step.targetId };
      case 'conflict':
        return { ...base, outcome: 'exists', targetId: step.targetId };
      case 'skipped':
        return { ...base, outcome: 'skipped', reason: step.reason };
      case 'blocked':
        return { ...base, outcome: 'invalid', problems: step.problems };
      case 'create':
      case 'update':
      case 'delete': {
        const outcome = outcomes.get(index);
        if (outcome?.kind === 'skipped') return { ...base, outcome: 'skipped', reason: outcome.reason };
        if (outcome?.kind === 'failed') {
          return {
            ...base,
            outcome: 'failed',
            targetName: step.targetName,
            httpStatus: outcome.httpStatus,
            message: scrub(outcome.message),
          };
        }
        if (outcome?.kind !== 'applied') return { ...base, outcome: 'pending', targetName: step.targetName };
        return done(step.kind, step.targetName, outcome.targetId);
      }
      default:
        return assertNever(step, 'profile step');
    }
  });
}

export function countProfileOutcomes(
  report: readonly ProfileReportLine[],
): Record<ProfileReportLine['outcome'], number> {
  return countLines(report, {
    created: 0,
    renamed: 0,
    updated: 0,
    deleted: 0,
    exists: 0,
    unchanged: 0,
    skipped: 0,
    failed: 0,
    invalid: 0,
    pending: 0,
  });
}

/** The scan profiles' summary: counts, then each failure and each skipped profile with its reason. */
export function formatProfileSummary(report: readonly ProfileReportLine[]): string {
  const earlier = report.filter((l) => 'earlierRun' in l && l.earlierRun).length;
  const notes: Readonly<Record<string, string>> = {
    created: earlier > 0 ? `(${earlier} by an earlier run)` : '',
    exists: '(already in the target, skipped)',
    pending: '(not settled: re-run to resume)',
  };
  const rows = Object.entries(countProfileOutcomes(report))
    .filter(([, n]) => n > 0)
    .map(([outcome, n]) => [outcome, n, notes[outcome] ?? ''] as const);
  const details = report.flatMap((line) => {
    if (line.outcome === 'failed')
      return [`  ${displayName(line.name)}: HTTP ${line.httpStatus ?? '-'} ${line.message}`];
    return line.outcome === 'skipped' ? [`  ${displayName(line.name)}: skipped: ${line.reason}`] : [];
  });
  return summaryText(`Scan profiles: ${report.length}`, rows, [9, 5], details);
}

/** The scan profiles' members of an import run's result. */
export interface ProfileRun {
  readonly profileReport: readonly ProfileReportLine[];
  readonly profileCounts: ReturnType<typeof countProfileOutcomes>;
  /** False when the snapshot says nothing about scan profiles. */
  readonly profilesIncluded: boolean;
}
