/**
 * What an import leaves behind for people and scripts: the per-entry report (JSON Lines, each line
 * naming its run), the id map, the summary. Built from the plan (what was decided) and the run's
 * outcomes (what happened), so a resumed run reports every entry, including those it created before
 * it was interrupted. None of them holds a
 * credential value: names, ids, HTTP statuses and scrubbed service messages only.
 */
import { readFile } from 'node:fs/promises';
import { countOf } from '../display-name.js';
import type { Problem } from '../errors.js';
import { writeFileAtomic } from '../files.js';
import { scrub } from '../secrets.js';
import type { WriteOutcome } from '../sync/execute.js';
import type { ImportPlan, PlanStep } from './plan.js';
import type { SecretWritten } from './source.js';

interface LineBase {
  readonly name: string;
  readonly type: string;
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
    | {
        readonly outcome: 'failed';
        readonly targetName: string;
        readonly httpStatus: number | undefined;
        readonly message: string;
      }
    | { readonly outcome: 'invalid'; readonly problems: readonly Problem[] }
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
 * `Object.assign`, not spread from a base: see `stepOf` in plan.ts (one shape per line otherwise).
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

/** Counts per outcome, for the summary and `--json`. */
export function countOutcomes(
  report: readonly ReportLine[],
): Record<ReportOutcome, number> & { earlierRun: number } {
  const counts = {
    created: 0,
    renamed: 0,
    updated: 0,
    deleted: 0,
    unchanged: 0,
    exists: 0,
    failed: 0,
    invalid: 0,
    pending: 0,
    earlierRun: 0,
  };
  for (const line of report) {
    counts[line.outcome] += 1;
    if ('earlierRun' in line && line.earlierRun) counts.earlierRun += 1;
  }
  return counts;
}

/** The human summary (stdout): counts, then each failure with its HTTP status and message. */
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
  const lines = [`Import into ${targetLabel}: ${countOf(report.length, 'entry', 'entries')}`];
  for (const [label, n, note] of rows)
    lines.push(`  ${label.padEnd(8)} ${String(n).padStart(6)}  ${note}`.trimEnd());
  const failures = report.filter((l) => l.outcome === 'failed');
  if (failures.length > 0) {
    lines.push('', 'Failures:');
    for (const f of failures) {
      if (f.outcome !== 'failed') continue;
      lines.push(`  ${f.name}: HTTP ${f.httpStatus ?? '-'} ${f.message}`);
    }
  }
  return scrub(lines.join('\n'));
}

/**
 * Write a report or id map atomically, mode 0600 ({@link writeFileAtomic}), scrubbed first: a failure's
 * message may quote the service, and the service may have echoed a secret.
 */
export function writeScrubbedFile(path: string, content: string): Promise<void> {
  return writeFileAtomic(path, scrub(content), { what: 'output file' });
}

/**
 * `--report`: one JSON line per entry, naming its object kind (`"object":"connection"`) and the run
 * (`null` when nothing was written: the target was up to date, or the run was refused).
 */
export function serializeReport(report: readonly ReportLine[], run: number | undefined = undefined): string {
  return report.map((l) => `${JSON.stringify({ object: 'connection', run: run ?? null, ...l })}\n`).join('');
}

/**
 * Add `content` to the report at `path`: a later run's lines follow an earlier run's, never replace
 * them. Written as a whole new file (atomic, 0600), so a crash leaves the old report or the new one.
 */
export async function appendReport(path: string, content: string): Promise<void> {
  let before = '';
  try {
    before = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (before !== '' && !before.endsWith('\n')) before += '\n';
  await writeScrubbedFile(path, before + content);
}
