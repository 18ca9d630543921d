/**
 * One line per step of an import plan, for `--dry-run` text output.
 */
import type { Problem } from '../errors.js';
import type { PlanStep } from './plan.js';

/** One line describing a step, for `--dry-run` text output (exhaustive over kinds). */
export function describeStep(step: PlanStep): string {
  switch (step.kind) {
    case 'create':
      return `create     ${step.name} (${step.type})`;
    case 'rename':
      return `rename     ${step.name} -> ${step.targetName} (${step.type})`;
    case 'reconcile':
      return `reconcile  ${step.targetName} (${step.type}): in doubt from an earlier run; look it up, create if absent`;
    case 'update':
      return `update     ${step.name} (${step.type}): ${step.fields.map((f) => f.path).join(', ')}`;
    case 'delete':
      return `delete     ${step.name}${step.type ? ` (${step.type})` : ''}: not in the snapshot (--prune)`;
    case 'unchanged':
      return `unchanged  ${step.name}: equal on every compared field`;
    case 'done':
      return `done       ${step.name}: ${step.op === undefined ? 'created' : `${step.op}d`} by an earlier run${step.targetId ? ` (${step.targetId})` : ''}`;
    case 'exists':
      return `exists     ${step.name}: already in the target, skipped`;
    case 'conflict':
      return `conflict   ${step.name}: already in the target (--on-conflict fail)`;
    case 'invalid':
      return `invalid    ${step.name} (${step.type}): ${groupProblems(step.problems)}`;
    default: {
      const unreachable: never = step;
      return String(unreachable);
    }
  }
}

/** `message: /a, /b; other message: /c`: one mention of each problem kind, with every field it concerns. */
function groupProblems(problems: readonly Problem[]): string {
  const byMessage = new Map<string, string[]>();
  for (const p of problems) {
    const paths = byMessage.get(p.message) ?? [];
    if (p.path) paths.push(p.path);
    byMessage.set(p.message, paths);
  }
  return [...byMessage]
    .map(([message, paths]) => (paths.length > 0 ? `${message}: ${paths.join(', ')}` : message))
    .join('; ');
}
