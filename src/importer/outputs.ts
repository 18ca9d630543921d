/** What an import leaves for people and scripts, kind-neutral; never a credential value. */
import { readFile } from 'node:fs/promises';
import type { Problem } from '../errors.js';
import { writeFileAtomic } from '../files.js';
import { scrub } from '../secrets.js';

/** A write the service refused, or that failed: a line of either kind. */
export interface FailedLine {
  readonly outcome: 'failed';
  readonly targetName: string;
  readonly httpStatus: number | undefined;
  readonly message: string;
}

/** An entry the pre-flight refused: a line of either kind. */
export interface InvalidLine {
  readonly outcome: 'invalid';
  readonly problems: readonly Problem[];
}

/** The lines of a report per outcome: `zero` names every outcome, in order. */
export function countLines<O extends string>(
  report: readonly { readonly outcome: O }[],
  zero: Record<O, number>,
): Record<O, number> {
  const counts = { ...zero };
  for (const line of report) counts[line.outcome] += 1;
  return counts;
}

/** A summary for stdout: its heading, a row per count (label, count, note), then `details`. */
export function summaryText(
  heading: string,
  rows: readonly (readonly [string, number, string])[],
  [labelWidth, countWidth]: readonly [number, number],
  details: readonly string[],
): string {
  const lines = [heading];
  for (const [label, n, note] of rows)
    lines.push(`  ${label.padEnd(labelWidth)} ${String(n).padStart(countWidth)}  ${note}`.trimEnd());
  return scrub([...lines, ...details].join('\n'));
}

/** Write a report or id map atomically, mode 0600, scrubbed: the service may have echoed a secret. */
export function writeScrubbedFile(path: string, content: string): Promise<void> {
  return writeFileAtomic(path, scrub(content), { what: 'output file' });
}

/** Add a run's records to the report at `path`, after the earlier runs' lines; atomically. */
export async function writeReport(path: string, records: Iterable<object>): Promise<void> {
  let before = '';
  try {
    before = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (before !== '' && !before.endsWith('\n')) before += '\n';
  // A record is made as its line is written: 100 000 lines are kept, not their records.
  const lines = [before];
  for (const r of records) lines.push(`${JSON.stringify(r)}\n`);
  await writeScrubbedFile(path, lines.join(''));
}
