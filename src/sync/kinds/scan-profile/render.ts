/** A scan profile plan in a dry run's text, `--format json` and Markdown. */
import { countOf } from '../../../display-name.js';
import { assertNever } from '../../../errors.js';
import { code, text } from '../../../markdown.js';
import type { KindMarkdown } from '../../kind.js';
import type { ProfilePlan, ProfileStep } from './kind.js';

/** A plan's members of a dry run's `--format json` document. */
export function planJson(plan: ProfilePlan): Readonly<Record<string, unknown>> {
  return {
    scanProfiles: plan.steps.map((s) => ({
      kind: s.kind,
      name: s.name,
      ...('targetName' in s && s.targetName !== s.name ? { targetName: s.targetName } : {}),
      ...(s.kind === 'skipped' ? { reason: s.reason } : {}),
      ...(s.kind === 'blocked' ? { problems: s.problems } : {}),
      ...(s.kind === 'update' ? { fields: s.fields.map((f) => f.path) } : {}),
    })),
  };
}

/** A plan's parts of a dry run's Markdown. */
export function planMarkdown({ steps }: ProfilePlan): KindMarkdown {
  const n = (kind: ProfileStep['kind']) => steps.filter((s) => s.kind === kind).length;
  const items = (kinds: readonly ProfileStep['kind'][]) =>
    steps.filter((s) => kinds.includes(s.kind)).map(markdownItem);
  return {
    row:
      steps.length > 0 ? ['Scan profiles', n('create'), n('update'), n('delete'), n('unchanged')] : undefined,
    also: (['exists', 'done', 'skipped', 'conflict', 'blocked'] as const).map((k) => [k, n(k)] as const),
    alsoNamed: true,
    sections: [
      ['Scan profiles to create', items(['create'])],
      ['Scan profiles to update', items(['update'])],
      ['Scan profiles to delete', items(['delete'])],
      ['Scan profiles not sent', items(['skipped', 'conflict', 'blocked'])],
    ],
  };
}

/** One line of a dry run's plan per scan profile step. */
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
      return `scan profile ${step.name}: refused: ${countOf(step.problems.length, 'problem')} (listed on stderr)`;
    default:
      return assertNever(step, 'profile step');
  }
}

function markdownItem(step: ProfileStep): string[] {
  const head = code(step.name);
  switch (step.kind) {
    case 'create':
      return [step.targetName === step.name ? head : `${head}: created as ${code(step.targetName)}`];
    case 'update':
      return [`${head}: ${step.fields.map((f) => code(f.path)).join(', ')}`];
    case 'skipped':
      return [`${head}: skipped: ${text(step.reason)}`];
    case 'blocked':
      return [`${head}: ${countOf(step.problems.length, 'problem')}`];
    case 'conflict':
      return [`${head}: already in the target (--on-conflict fail)`];
    default:
      return [head];
  }
}
