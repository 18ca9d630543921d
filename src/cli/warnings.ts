/** Repeated warnings collapsed into one line with a count and examples (`--verbose`: every line). */
import { summaryName } from '../display-name.js';
import type { CliContext } from './context.js';

/** How many examples a collapsed line names; a group this small is printed in full. */
export const MAX_WARNING_EXAMPLES = 3;

/** One warning: its group (the message without the entry), where (an example), its full line. */
interface GroupedWarning {
  readonly group: string;
  readonly where: string;
  readonly text: string;
}

/** The lines to print: full lines for small groups or `verbose`, else one per group. */
export function collapseWarnings(
  warnings: readonly GroupedWarning[],
  options: { readonly verbose: boolean; readonly hints?: Readonly<Record<string, string>> },
): string[] {
  if (options.verbose) return warnings.map((w) => w.text);
  const groups = new Map<string, GroupedWarning[]>();
  for (const w of warnings) {
    const members = groups.get(w.group);
    if (members) members.push(w);
    else groups.set(w.group, [w]);
  }
  const lines: string[] = [];
  for (const [group, members] of groups) {
    if (members.length <= MAX_WARNING_EXAMPLES) {
      lines.push(...members.map((m) => m.text));
      continue;
    }
    const examples = members.slice(0, MAX_WARNING_EXAMPLES).map((m) => summaryName(m.where));
    const hint = options.hints?.[group];
    lines.push(
      `${group}: ${members.length} times (e.g. ${examples.join('; ')}; --verbose lists all)${hint ? `; ${hint}` : ''}`,
    );
  }
  return lines;
}

/** Print `warnings` on stderr, collapsed unless `--verbose` (nothing under `--quiet`). */
export function printWarnings(
  ctx: CliContext,
  warnings: readonly GroupedWarning[],
  hints?: Readonly<Record<string, string>>,
): void {
  for (const line of collapseWarnings(warnings, { verbose: ctx.globals.verbose, hints })) ctx.out.warn(line);
}
