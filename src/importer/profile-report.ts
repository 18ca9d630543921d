/**
 * The `--report` lines, counts and dry-run lines of an import's scan profiles.
 */
import { assertNever, type Problem } from '../errors.js';
import { scrub } from '../secrets.js';
import type { WriteOutcome } from '../sync/execute.js';
import type { JournalOp } from '../sync/journal/records.js';
import type { ProfilePlan, ProfileStep } from './profile-plan.js';

/** How one profile step ended in this run: the executor's outcome, or not sent (and why). */
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
  | {
      readonly outcome: 'failed';
      readonly targetName: string;
      readonly httpStatus: number | undefined;
      readonly message: string;
    }
  | { readonly outcome: 'invalid'; readonly problems: readonly Problem[] }
  | { readonly outcome: 'pending'; readonly targetName: string }
);

function doneOutcome(
  action: JournalOp,
  name: string,
  targetName: string,
): 'created' | 'renamed' | 'updated' | 'deleted' {
  if (action === 'create') return targetName === name ? 'created' : 'renamed';
  return action === 'update' ? 'updated' : 'deleted';
}

/** One report line per step: the plan and what the run did. */
export function buildProfileReport(
  plan: ProfilePlan,
  outcomes: ReadonlyMap<number, ProfileOutcome>,
): ProfileReportLine[] {
  return plan.steps.map((step, index): ProfileReportLine => {
    const base = { object: 'scan profile' as const, name: step.name };
    const done = (op: JournalOp, targetName: string, targetId: string | undefined, via?: string) =>
      ({
        ...base,
        outcome: doneOutcome(op, step.name, targetName),
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

/** Counts per outcome of the profile report. */
export function countProfileOutcomes(
  report: readonly ProfileReportLine[],
): Record<ProfileReportLine['outcome'], number> {
  const counts: Record<ProfileReportLine['outcome'], number> = {
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
  };
  for (const line of report) counts[line.outcome] += 1;
  return counts;
}

/** One line per step for a dry run. */
export function describeProfileStep(step: ProfileStep): string {
  switch (step.kind) {
    case 'create':
      return `scan profile ${step.name}: create${step.targetName === step.name ? '' : ` as '${step.targetName}'`}${step.attempt > 1 ? ' (in doubt: not found in the target, sent again)' : ''}`;
    case 'update':
      return `scan profile ${step.name}: update (${step.fields.map((f) => f.path).join(', ')})`;
    case 'delete':
      return `scan profile ${step.name}: delete (not in the snapshot, --prune)`;
    case 'done':
      return `scan profile ${step.name}: done (${step.via === 'journal' ? 'by an earlier run' : 'found in the target after an interrupted request'})`;
    case 'exists':
      return `scan profile ${step.name}: exists in the target, skipped`;
    case 'unchanged':
      return `scan profile ${step.name}: unchanged`;
    case 'skipped':
      return `scan profile ${step.name}: skipped: ${step.reason}`;
    case 'conflict':
      return `scan profile ${step.name}: exists in the target (--on-conflict fail)`;
    case 'blocked':
      // The problems themselves are in the pre-flight's one list.
      return `scan profile ${step.name}: refused: ${step.problems.length} problem${step.problems.length === 1 ? '' : 's'} (listed on stderr)`;
    default:
      return assertNever(step, 'profile step');
  }
}

/** `--report` lines of the scan profiles. */
export function serializeProfileReport(
  report: readonly ProfileReportLine[],
  run: number | undefined,
): string {
  return report.map((l) => `${JSON.stringify({ ...l, run: run ?? null })}\n`).join('');
}
