/**
 * Repeated warnings, collapsed: a warning that recurs (the same message for many entries) is printed as
 * one line with its count and the first few examples, instead of one line per entry; `--verbose` prints
 * every line, `--json` results carry every warning (the command's own document), `--quiet` prints none.
 */
import { summaryName } from '../display-name.js';
import type { CliContext } from './context.js';

/** How many examples a collapsed line names; a group this small is printed in full. */
export const MAX_WARNING_EXAMPLES = 3;

/** One warning, as a full line and as a member of its group. */
export interface GroupedWarning {
  /** What recurs: the message without the entry (`must be supplied at import`); the group's key. */
  readonly group: string;
  /** Where (`finance-s3 /password`): an example of a collapsed line. */
  readonly where: string;
  /** The full line (`--verbose`, or a small group). */
  readonly text: string;
}

/** The lines to print for `warnings` (pure): full lines for small groups or `verbose`, else one per group. */
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
  for (const line of collapseWarnings(warnings, {
    verbose: ctx.globals.verbose,
    ...(hints ? { hints } : {}),
  }))
    ctx.out.warn(line);
}
