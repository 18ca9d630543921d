/**
 * What an import leaves behind for people and scripts: the per-entry report of its connections and
 * scan profiles (JSON Lines, each line naming its run), the id map, the summary. Built from the plans
 * (what was decided) and the run's outcomes (what happened), so a resumed run reports every entry,
 * including those it created before it was interrupted. None of them holds a credential value: names,
 * ids, HTTP statuses and scrubbed service messages only.
 */
import { readFile } from 'node:fs/promises';
import { countOf, displayName } from '../display-name.js';
import { assertNever, type Problem } from '../errors.js';
import { writeFileAtomic } from '../files.js';
import { scrub } from '../secrets.js';
import type { WriteOutcome } from '../sync/execute.js';
import type { JournalOp } from '../sync/journal/records.js';
import type { ImportPlan, PlanStep } from '../sync/kinds/connection.js';
import type { ProfilePlan } from '../sync/kinds/scan-profile.js';
import type { SecretWritten } from './source.js';

interface LineBase {
  readonly name: string;
  readonly type: string;
}

/** A write the service refused, or that failed: a line of either kind. */
interface FailedLine {
  readonly outcome: 'failed';
  readonly targetName: string;
  readonly httpStatus: number | undefined;
  readonly message: string;
}

/** An entry the pre-flight refused: a line of either kind. */
interface InvalidLine {
  readonly outcome: 'invalid';
  readonly problems: readonly Problem[];
}

/** One line of `--report`: the outcome of one snapshot entry. */
export type ReportLine = LineBase &
  (
    | {
        readonly outcome: 'created' | 'renamed';
        readonly targetName: string;
        readonly sourceId: string | undefined;
        readonly targetId: string | undefined;
        /** True when an earlier run of this import created it (from the journal). */
        readonly earlierRun: boolean;
        /** True when it was found on the target after an in-doubt POST, rather than by the POST's answer. */
        readonly reconciled: boolean;
      }
    | {
        /** Put in line with the snapshot (`--on-conflict update`). */
        readonly outcome: 'updated';
        readonly sourceId: string | undefined;
        readonly targetId: string | undefined;
        /** The fields that differed (JSON pointers); empty when an earlier run updated it. */
        readonly fields: readonly string[];
        /** The secrets the update wrote and where each value came from (never the value). */
        readonly secretsWritten: readonly SecretWritten[];
        readonly earlierRun: boolean;
      }
    | {
        /** Not in the snapshot, deleted (`--prune`). */
        readonly outcome: 'deleted';
        readonly targetId: string | undefined;
        readonly earlierRun: boolean;
      }
    | {
        /** `unchanged`: in the target and equal on every compared field (`--on-conflict update`). */
        readonly outcome: 'unchanged' | 'exists';
        readonly sourceId: string | undefined;
        readonly targetId: string | undefined;
        /** True when someone else created it while this run was writing (its create was refused). */
        readonly meanwhile?: boolean;
        /**
         * Set when it is `not ours`: this run's create was in doubt and a look-up found an object created
         * (this `created_at`) before the run's request.
         */
        readonly createdAt?: string;
      }
    | FailedLine
    | InvalidLine
    | {
        /** The run stopped (Ctrl-C, budget, 401) before this entry was settled; a re-run finishes it. */
        readonly outcome: 'pending';
        readonly targetName: string;
        readonly inDoubt: boolean;
      }
  );

/** Every report outcome. */
export type ReportOutcome = ReportLine['outcome'];

/** The id map: source `_id` -> target name and `_id`. */
export type IdMap = Record<string, { readonly name: string; readonly targetId: string }>;

/**
 * A report line: the step's name and type, then its own fields. Built on a literal with
 * `Object.assign`, not spread from a base: see `stepOf` in `sync/kinds/connection.ts` (one shape per
 * line otherwise).
 */
function lineOf<const T extends object>(step: LineBase, own: T) {
  return Object.assign({ name: step.name, type: step.type }, own);
}

/** Combine the plan and the run's outcomes into one report line per entry, in name order. */
export function buildReport(plan: ImportPlan, outcomes: ReadonlyMap<string, WriteOutcome>): ReportLine[] {
  return plan.steps.map((step) => reportLine(step, outcomes.get(step.name)));
}

type WritingStep = Extract<PlanStep, { readonly targetName: string }>;

/** The line of a write: made by this run (`targetId` from its answer or the plan) or by an earlier one. */
function appliedLine(
  step: WritingStep,
  op: 'create' | 'update' | 'delete',
  targetId: string | undefined,
  earlierRun: boolean,
  reconciled: boolean,
): ReportLine {
  if (op === 'update') {
    const fields = step.kind === 'update' ? step.fields.map((f) => f.path) : [];
    const secretsWritten = step.kind === 'update' ? step.secrets : [];
    return lineOf(step, {
      outcome: 'updated',
      sourceId: step.sourceId,
      targetId,
      fields,
      secretsWritten,
      earlierRun,
    });
  }
  if (op === 'delete') return lineOf(step, { outcome: 'deleted', targetId, earlierRun });
  const outcome = step.targetName === step.name ? 'created' : 'renamed';
  const { targetName, sourceId } = step;
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

/**
 * The id map of a report: every entry with a source `_id` that now has a counterpart in the target
 * (created now, by an earlier run, or already existing by name), so scan profiles can be remapped.
 */
export function buildIdMap(report: readonly ReportLine[]): IdMap {
  const map: IdMap = {};
  for (const line of report) {
    if (!('sourceId' in line) || !line.sourceId || !line.targetId) continue;
    const name = 'targetName' in line ? line.targetName : line.name;
    map[line.sourceId] = { name, targetId: line.targetId };
  }
  return map;
}

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
  | FailedLine
  | InvalidLine
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

/** One report line per scan profile step: the plan and what the run did. */
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

/** The lines of a report per outcome: `zero` names every outcome, in the order they are shown. */
function countLines<O extends string>(
  report: readonly { readonly outcome: O }[],
  zero: Record<O, number>,
): Record<O, number> {
  const counts = { ...zero };
  for (const line of report) counts[line.outcome] += 1;
  return counts;
}

/** Counts per outcome, for the summary and `--json`. */
export function countOutcomes(
  report: readonly ReportLine[],
): Record<ReportOutcome, number> & { earlierRun: number } {
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

/** Counts per outcome of the scan profiles' report. */
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

/** A summary for stdout: its heading, a row per count (label, count, note) in columns of `widths`, then `details`. */
function summaryText(
  heading: string,
  rows: readonly (readonly [string, number, string])[],
  [labelWidth, countWidth]: readonly [number, number],
  details: readonly string[],
): string {
  const lines = [heading];
  for (const [label, n, note] of rows)
    lines.push(`  ${label.padEnd(labelWidth)} ${String(n).padStart(countWidth)}  ${note}`.trimEnd());
  return scrub([...lines, ...details].join('\n'));
}

/** The connections' summary: counts, then each failure with its HTTP status and message. */
export function formatSummary(report: readonly ReportLine[], targetLabel: string): string {
  const c = countOutcomes(report);
  const rows: [string, number, string][] = [
    [
      'created',
      c.created,
      c.earlierRun > 0
        ? `(${c.earlierRun} ${c.updated + c.deleted > 0 ? 'done' : 'created or renamed'} by an earlier run)`
        : '',
    ],
    ['renamed', c.renamed, ''],
  ];
  // The converge rows only when the run could have any (keeps the create-only summary as it was).
  if (c.updated + c.deleted + c.unchanged > 0) {
    rows.push(['updated', c.updated, ''], ['deleted', c.deleted, ''], ['unchanged', c.unchanged, '']);
  }
  const notOurs = report.filter((l) => l.outcome === 'exists' && l.createdAt !== undefined).length;
  rows.push(
    [
      'existed',
      c.exists,
      `(already in the target, skipped${notOurs > 0 ? `; ${notOurs} not ours: created by someone else before this run's request` : ''})`,
    ],
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

/**
 * Write a report or id map atomically, mode 0600 ({@link writeFileAtomic}), scrubbed first: a failure's
 * message may quote the service, and the service may have echoed a secret.
 */
export function writeScrubbedFile(path: string, content: string): Promise<void> {
  return writeFileAtomic(path, scrub(content), { what: 'output file' });
}

/**
 * Add a run's `--report` records to the report at `path`, one JSON line each (each kind's records, in
 * the order of `KINDS`, name their object and the run). A later run's lines follow an earlier run's,
 * never replace them; written as a whole new file, so a crash leaves the old report or the new one.
 */
export async function writeReport(path: string, records: readonly object[]): Promise<void> {
  let before = '';
  try {
    before = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (before !== '' && !before.endsWith('\n')) before += '\n';
  await writeScrubbedFile(path, before + records.map((r) => `${JSON.stringify(r)}\n`).join(''));
}

/** The connections' members of an import run's result. */
export interface ConnectionRun {
  readonly report: readonly ReportLine[];
  readonly counts: ReturnType<typeof countOutcomes>;
}

/** The scan profiles' members of an import run's result. */
export interface ProfileRun {
  /** One line per scan profile (the snapshot's, and the target's pruned ones). */
  readonly profileReport: readonly ProfileReportLine[];
  readonly profileCounts: ReturnType<typeof countProfileOutcomes>;
  /** False when the snapshot says nothing about scan profiles (version 1, or exported without them). */
  readonly profilesIncluded: boolean;
}
