/** An import plan as GitHub-flavoured Markdown (`import --dry-run --format markdown`). Pure. */
import { countOf } from '../display-name.js';
import { code, row, section, text } from '../markdown.js';
import { eachPlan, type UnchangingStep } from '../sync/kind.js';
import type { ImportResult } from './import-types.js';
import { formatProblem } from './preflight.js';

/** The plan of a dry run as Markdown (ends with a newline). */
export function renderPlanMarkdown(dryRun: Extract<ImportResult, { kind: 'dry-run' }>): string {
  const parts = eachPlan(dryRun).map(([kind, plan]) => [kind, kind.planMarkdown(plan)] as const);
  const lines = [
    `## Import plan: ${countOf(dryRun.entryCount, 'snapshot entry', 'snapshot entries')} into ${code(dryRun.target)}`,
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
  if (dryRun.problems.length > 0)
    lines.push(
      ...section(
        `The pre-flight would refuse this import (${countOf(dryRun.problems.length, 'problem')})`,
        dryRun.problems.map((p) => [text(formatProblem(p))]),
      ),
    );
  if (dryRun.confirmRequired !== undefined)
    lines.push(
      `${code(dryRun.target)} is a protected environment: the real run needs \`--confirm\` ${code(dryRun.confirmRequired)}.`,
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
