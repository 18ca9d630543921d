/**
 * One line per step of an import plan, for `--dry-run` text output.
 */
import { countOf, displayName } from '../display-name.js';
import { assertNever } from '../errors.js';
import type { PlanStep } from '../sync/kinds/connection.js';

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
      // Its problems are in the pre-flight's one list on stderr, not repeated here.
      return `invalid    ${name} (${step.type}): ${countOf(step.problems.length, 'problem')} (listed on stderr)`;
    default:
      return assertNever(step, 'plan step');
  }
}
