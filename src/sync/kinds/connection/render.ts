/** A connection plan in a dry run's text, `--format json` and Markdown. */
import { countOf, displayName } from '../../../display-name.js';
import { assertNever } from '../../../errors.js';
import { code, text } from '../../../markdown.js';
import type { KindMarkdown } from '../../kind.js';
import type { ImportPlan, PlanStep, PlanStepKind } from './kind.js';

/** One line describing a step (an update's secrets follow on lines of their own). */
export function describeStep(step: PlanStep): string {
  const name = displayName(step.name);
  switch (step.kind) {
    case 'create':
      return `create     ${name} (${step.type})`;
    case 'rename':
      return `rename     ${name} -> ${displayName(step.targetName)} (${step.type})`;
    case 'reconcile':
      return `reconcile  ${displayName(step.targetName)} (${step.type}): in doubt from an earlier run; look it up, create if absent`;
    case 'update':
      return [
        `update     ${name} (${step.type}): ${step.fields.map((f) => f.path).join(', ')}`,
        // The target's secrets are masked: an update writes each one, whether or not it differs.
        ...step.secrets.map((s) => `           ${s.path}: written (from the ${s.from})`),
      ].join('\n');
    case 'delete':
      return `delete     ${name}${step.type ? ` (${step.type})` : ''}: not in the snapshot (--prune)`;
    case 'unchanged':
      return `unchanged  ${name}: equal on every compared field`;
    case 'done':
      return `done       ${name}: ${step.op === undefined ? 'created' : `${step.op}d`} by an earlier run${step.targetId ? ` (${step.targetId})` : ''}`;
    case 'exists':
      return `exists     ${name}: already in the target, skipped`;
    case 'conflict':
      return `conflict   ${name}: already in the target (--on-conflict fail)`;
    case 'invalid':
      return `invalid    ${name} (${step.type}): ${countOf(step.problems.length, 'problem')} (listed on stderr)`;
    default:
      return assertNever(step, 'plan step');
  }
}

function markdownItem(step: PlanStep): string[] {
  const head = `${code(step.name)}${step.type ? ` (${text(step.type)})` : ''}`;
  switch (step.kind) {
    case 'create':
    case 'rename':
      return [step.targetName === step.name ? head : `${head}: created as ${code(step.targetName)}`];
    case 'reconcile':
      return [`${head}: in doubt from an earlier run; looked up, created if absent`];
    case 'update':
      return [
        `${head}: ${step.fields.map((f) => code(f.path)).join(', ')}`,
        ...step.secrets.map((s) => `- secret ${code(s.path)}: written (from the ${s.from})`),
      ];
    case 'delete':
      return [`${head}: not in the snapshot (--prune)`];
    case 'invalid':
      return [`${head}: ${countOf(step.problems.length, 'problem')}`];
    case 'conflict':
      return [`${head}: already in the target (--on-conflict fail)`];
    default:
      return [head];
  }
}

/** A plan's members of a dry run's `--format json` document. */
export function planJson(plan: ImportPlan): Readonly<Record<string, unknown>> {
  return {
    counts: plan.counts,
    steps: plan.steps.map((s) => ({
      kind: s.kind,
      name: s.name,
      type: s.type,
      ...('targetName' in s && s.targetName !== s.name ? { targetName: s.targetName } : {}),
      ...('targetId' in s && s.targetId ? { targetId: s.targetId } : {}),
      ...(s.kind === 'invalid' ? { problems: s.problems } : {}),
      ...(s.kind === 'update' ? { fields: s.fields.map((f) => f.path), secretsWritten: s.secrets } : {}),
      ...(s.kind === 'done' && s.op !== undefined ? { op: s.op } : {}),
    })),
  };
}

/** A plan's parts of a dry run's Markdown. */
export function planMarkdown({ steps, counts: c }: ImportPlan): KindMarkdown {
  const items = (kinds: readonly PlanStepKind[]) =>
    steps.filter((s) => kinds.includes(s.kind)).map(markdownItem);
  return {
    row: ['Connections', c.create + c.rename + c.reconcile, c.update, c.delete, c.unchanged],
    also: (['exists', 'done', 'conflict', 'invalid'] as const).map((k) => [k, c[k]] as const),
    sections: [
      ['Connections to create', items(['create', 'rename', 'reconcile'])],
      ['Connections to update', items(['update'])],
      ['Connections to delete', items(['delete'])],
      ['Connections refused', items(['invalid', 'conflict'])],
    ],
  };
}
