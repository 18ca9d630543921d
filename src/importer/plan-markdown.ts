/**
 * An import plan as GitHub-flavoured Markdown (`import --dry-run --format markdown`), for a pull-request
 * comment or a change ticket: a counts table (a row per kind), then each change with its fields, the
 * secrets an update writes named (never valued), long lists folded in `<details>`. Each kind says its
 * parts (`planMarkdown` of its descriptor). Pure: returns the text.
 */
import { countOf } from '../display-name.js';
import type { Problem } from '../errors.js';
import { code, row, section, text } from '../markdown.js';
import { eachPlan, type KindPlans, type UnchangingStep } from '../sync/kind.js';
import { formatProblem } from './preflight.js';

/** What {@link renderPlanMarkdown} prints besides the plans. */
export interface PlanMarkdownContext {
  readonly target: string;
  readonly entryCount: number;
  readonly problems: readonly Problem[];
  readonly confirmRequired: string | undefined;
}

/** The plan of a dry run as Markdown (ends with a newline). */
export function renderPlanMarkdown(plans: KindPlans, context: PlanMarkdownContext): string {
  const parts = eachPlan(plans).map(([kind, plan]) => [kind, kind.planMarkdown(plan)] as const);
  const lines = [
    `## Import plan: ${countOf(context.entryCount, 'snapshot entry', 'snapshot entries')} into ${code(context.target)}`,
    '',
    'Dry run: nothing was sent.',
    '',
    row(['', 'Create', 'Update', 'Delete', 'Unchanged']),
    row(['---', '---:', '---:', '---:', '---:']),
  ];
  for (const [, part] of parts) if (part.row !== undefined) lines.push(row(part.row));
  lines.push('');
  const others = parts.flatMap(([kind, part]) =>
    part.also
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${part.alsoNamed ? countOf(n, kind.label) : n} ${OTHER[k]}`),
  );
  if (others.length > 0) lines.push(`Also: ${others.join(', ')}.`, '');
  for (const [, part] of parts)
    for (const [title, items] of part.sections) lines.push(...section(title, items));
  if (context.problems.length > 0)
    lines.push(
      ...section(
        `The pre-flight would refuse this import (${countOf(context.problems.length, 'problem')})`,
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
const OTHER: Readonly<Record<UnchangingStep, string>> = {
  exists: 'already in the target (skipped)',
  done: 'done by an earlier run',
  skipped: 'skipped',
  conflict: 'in conflict (--on-conflict fail)',
  invalid: 'refused by the pre-flight',
  blocked: 'refused by the pre-flight',
};
