/** `dds-migrate runs JOURNAL`: the runs of a journal, oldest first, and what each wrote. */
import { ExitCode, UsageError } from '../errors.js';
import { KINDS } from '../sync/kind.js';
import { type KindCounts, listRuns, type RunSummary } from '../sync/runs.js';
import type { CommandSpec } from './command.js';
import { formatOption, readPathOption } from './options.js';
import { chooseFormat, renderTable } from './render.js';

const FORMATS = ['table', 'json'] as const;

/** `created 3, updated 1, deleted 1` (what is zero left out; `-` when nothing). */
function describeCounts(c: KindCounts): string {
  const parts: string[] = [];
  if (c.created > 0) parts.push(`created ${c.created}${c.found > 0 ? ` (${c.found} in doubt)` : ''}`);
  if (c.updated > 0) parts.push(`updated ${c.updated}`);
  if (c.deleted > 0) parts.push(`deleted ${c.deleted}`);
  if (c.notOurs > 0) parts.push(`not ours ${c.notOurs}`);
  if (c.failed > 0) parts.push(`failed ${c.failed}`);
  if (c.inDoubt > 0) parts.push(`unsettled ${c.inDoubt}`);
  return parts.length > 0 ? parts.join(', ') : '-';
}

function whatOf(run: RunSummary, runs: readonly RunSummary[]): string {
  if (run.command === 'undo') {
    // A second undo of a run takes back only the creates the first one left in doubt.
    const again = runs.some(
      (r) => r.command === 'undo' && r.undoes === run.undoes && r.run < run.run && r.status === 'finished',
    );
    return `undo of run ${run.undoes}${again ? ' (in-doubt creates)' : ''}`;
  }
  return run.undoneBy === null ? 'import' : `import (undone by run ${run.undoneBy})`;
}

export const runsCommand: CommandSpec = {
  builder: (yargs) =>
    yargs
      .positional('journal', { type: 'string', describe: 'The journal an import wrote' })
      .option('format', formatOption(FORMATS, 'Output format (default: table; json with --json)')),
  examples: [
    { command: '$0 runs dr.journal.jsonl', describe: 'The runs of that journal, as a table' },
    {
      command: '$0 runs dr.journal.jsonl --format json',
      describe: 'The same as one JSON document, with counts per object kind',
    },
  ],
  async run(args, ctx) {
    const journal = readPathOption(args, 'journal', ctx.io.cwd);
    if (journal === undefined) throw new UsageError('Missing JOURNAL', { hint: 'See --help' });
    const result = await listRuns(journal);
    const format = chooseFormat(args.format, ctx.globals.json, FORMATS, 'table');
    if (format === 'json') {
      ctx.out.json(result);
      return ExitCode.ok;
    }
    if (result.runs.length === 0) {
      ctx.out.result(`No runs in ${result.journal} (target ${result.target})`);
      return ExitCode.ok;
    }
    const columns = KINDS.map((k) => ({ kind: k, title: `${k.label}s` }));
    const rows = result.runs.map((r) => ({
      run: r.run,
      what: whatOf(r, result.runs),
      status: r.status,
      started: r.startedAt,
      ...Object.fromEntries(columns.map((c) => [c.title, describeCounts(r[c.kind.runsKey] as KindCounts)])),
    }));
    ctx.out.result(`Runs of ${result.journal} (target ${result.target}):`);
    ctx.out.result(
      renderTable(rows, ['run', 'what', 'status', 'started', ...columns.map((c) => c.title)], 80),
    );
    return ExitCode.ok;
  },
};
