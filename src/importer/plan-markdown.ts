/**
 * An import plan as GitHub-flavoured Markdown (`import --dry-run --format markdown`), for a pull-request
 * comment or a change ticket: a counts table (connections and scan profiles apart), then each change
 * with its fields, the secrets an update writes named (never valued), long lists folded in `<details>`.
 * Pure: returns the text.
 */
import type { Problem } from '../errors.js';
import { code, row, section, text } from '../markdown.js';
import type { ImportPlan, PlanStep } from '../sync/kinds/connection.js';
import type { ProfilePlan, ProfileStep } from '../sync/kinds/scan-profile.js';
import { formatProblem } from './preflight.js';

/** What {@link renderPlanMarkdown} prints besides the plans. */
export interface PlanMarkdownContext {
  readonly target: string;
  readonly entryCount: number;
  readonly problems: readonly Problem[];
  readonly confirmRequired: string | undefined;
}

const CONNECTION_COLUMNS = {
  create: ['create', 'rename', 'reconcile'],
  update: ['update'],
  delete: ['delete'],
  unchanged: ['unchanged'],
} as const;

/** The plan of a dry run as Markdown (ends with a newline). */
export function renderPlanMarkdown(
  plan: ImportPlan,
  profilePlan: ProfilePlan,
  context: PlanMarkdownContext,
): string {
  const c = plan.counts;
  const sum = (kinds: readonly PlanStep['kind'][]) => kinds.reduce((n, k) => n + c[k], 0);
  const profileCount = (kind: ProfileStep['kind']) => profilePlan.steps.filter((s) => s.kind === kind).length;
  const lines = [
    `## Import plan: ${context.entryCount} snapshot entr${context.entryCount === 1 ? 'y' : 'ies'} into ${code(context.target)}`,
    '',
    'Dry run: nothing was sent.',
    '',
    row(['', 'Create', 'Update', 'Delete', 'Unchanged']),
    row(['---', '---:', '---:', '---:', '---:']),
    row(['Connections', ...Object.values(CONNECTION_COLUMNS).map(sum)]),
  ];
  const profileColumns = ['create', 'update', 'delete', 'unchanged'] as const;
  if (profilePlan.steps.length > 0) lines.push(row(['Scan profiles', ...profileColumns.map(profileCount)]));
  lines.push('');
  const others = [
    ...(['exists', 'done', 'conflict', 'invalid'] as const)
      .filter((k) => c[k] > 0)
      .map((k) => `${c[k]} ${OTHER[k]}`),
    ...(['exists', 'done', 'skipped', 'conflict', 'blocked'] as const)
      .filter((k) => profileCount(k) > 0)
      .map((k) => `${profileCount(k)} scan profile${profileCount(k) === 1 ? '' : 's'} ${OTHER[k]}`),
  ];
  if (others.length > 0) lines.push(`Also: ${others.join(', ')}.`, '');

  const steps = (kinds: readonly PlanStep['kind'][]) => plan.steps.filter((s) => kinds.includes(s.kind));
  lines.push(...section('Connections to create', steps(CONNECTION_COLUMNS.create).map(item)));
  lines.push(...section('Connections to update', steps(['update']).map(item)));
  lines.push(...section('Connections to delete', steps(['delete']).map(item)));
  lines.push(...section('Connections refused', steps(['invalid', 'conflict']).map(item)));
  const profiles = (kinds: readonly ProfileStep['kind'][]) =>
    profilePlan.steps.filter((s) => kinds.includes(s.kind)).map(item);
  lines.push(...section('Scan profiles to create', profiles(['create'])));
  lines.push(...section('Scan profiles to update', profiles(['update'])));
  lines.push(...section('Scan profiles to delete', profiles(['delete'])));
  lines.push(...section('Scan profiles not sent', profiles(['skipped', 'conflict', 'blocked'])));
  if (context.problems.length > 0)
    lines.push(
      ...section(
        `The pre-flight would refuse this import (${context.problems.length} problem${context.problems.length === 1 ? '' : 's'})`,
        context.problems.map((p) => [text(formatProblem(p))]),
      ),
    );
  if (context.confirmRequired !== undefined)
    lines.push(
      `${code(context.target)} is a protected environment: the real run needs \`--confirm\` ${code(context.confirmRequired)}.`,
      '',
    );
  return `${lines.join('\n').trimEnd()}\n`;
}

/** What a step that changes nothing means, in the "Also:" line. */
const OTHER = {
  exists: 'already in the target (skipped)',
  done: 'done by an earlier run',
  skipped: 'skipped',
  conflict: 'in conflict (--on-conflict fail)',
  invalid: 'refused by the pre-flight',
  blocked: 'refused by the pre-flight',
} as const;

/** A step of either plan: its name (a connection's with its type), then what the step changes. */
function item(step: PlanStep | ProfileStep): string[] {
  const connection = 'type' in step;
  const head = `${code(step.name)}${connection && step.type ? ` (${text(step.type)})` : ''}`;
  switch (step.kind) {
    case 'create':
    case 'rename':
      return [step.targetName === step.name ? head : `${head}: created as ${code(step.targetName)}`];
    case 'reconcile':
      return [`${head}: in doubt from an earlier run; looked up, created if absent`];
    case 'update':
      return [
        `${head}: ${step.fields.map((f) => code(f.path)).join(', ')}`,
        ...('secrets' in step ? step.secrets : []).map(
          (s) => `- secret ${code(s.path)}: written (from the ${s.from})`,
        ),
      ];
    case 'delete':
      return [connection ? `${head}: not in the snapshot (--prune)` : head];
    case 'skipped':
      return [`${head}: skipped: ${text(step.reason)}`];
    case 'invalid':
    case 'blocked':
      return [`${head}: ${step.problems.length} problem${step.problems.length === 1 ? '' : 's'}`];
    case 'conflict':
      return [`${head}: already in the target (--on-conflict fail)`];
    default:
      return [head];
  }
}
