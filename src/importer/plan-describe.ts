/**
 * One line per step of an import plan, for `--dry-run` text output.
 */
import { displayName } from '../display-name.js';
import { assertNever, type Problem } from '../errors.js';
import type { PlanStep } from './plan.js';

/**
 * One line describing a step, for `--dry-run` text output (exhaustive over kinds); an update's secrets
 * follow on lines of their own, indented under its name.
 */
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
      return `invalid    ${name} (${step.type}): ${groupProblems(step.problems)}`;
    default:
      return assertNever(step, 'plan step');
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
