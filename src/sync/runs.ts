/** The runs of a journal (`runs JOURNAL`, read only), and which run an import or an undo writes. */
import { InputFileError, UsageError } from '../errors.js';
import type { JournalObject } from './journal/records.js';
import {
  type JournalReplay,
  type RunCounts,
  type RunState,
  replayJournalFile,
  zeroCounts,
} from './journal/replay.js';
import { KINDS } from './kind.js';

/** What a run wrote of one kind, and what it left unsettled. */
export type KindCounts = RunCounts & { readonly inDoubt: number };

/** One run as `runs` shows it; under each kind's `runsKey` (`connections`), its {@link KindCounts}. */
export type RunSummary = {
  readonly run: number;
  readonly command: 'import' | 'undo';
  readonly undoes: number | null;
  /** The finished undo run that took this one back. */
  readonly undoneBy: number | null;
  readonly startedAt: string;
  readonly endedAt: string | null;
  readonly status: 'finished' | 'interrupted';
} & { readonly [runsKey: string]: unknown };

/** What the journal at `path` is bound to, and its runs. */
export interface JournalRuns {
  readonly journal: string;
  readonly snapshotSha256: string;
  readonly target: string;
  readonly runs: readonly RunSummary[];
}

function countsOf(run: RunState, object: JournalObject): KindCounts {
  let inDoubt = 0;
  for (const w of run.writes.values()) if (w.object === object && w.state === 'in-doubt') inDoubt += 1;
  return { ...(run.counts[object] ?? zeroCounts()), inDoubt };
}

const JOURNAL_HINT = 'Pass the journal an import wrote (default <snapshot>.<target host>.journal.jsonl)';

/** A journal that cannot be read (`code`: the system's). */
export function cannotReadJournal(path: string, code: string): InputFileError {
  return new InputFileError(path, undefined, `cannot read the journal (${code})`, { hint: JOURNAL_HINT });
}

/** Read the runs of the journal at `path`. */
export async function listRuns(path: string): Promise<JournalRuns> {
  const read = await replayJournalFile(path).catch((error: unknown) => {
    if (error instanceof InputFileError) throw error;
    throw cannotReadJournal(path, (error as NodeJS.ErrnoException).code ?? 'error');
  });
  if (read === undefined) throw cannotReadJournal(path, 'ENOENT');
  const begin = read.replay.begin;
  if (begin === undefined)
    throw new InputFileError(path, undefined, 'the journal is empty', { hint: JOURNAL_HINT });
  const runs = read.replay.runs;
  const undoneBy = undoneRuns(runs);
  return {
    journal: path,
    snapshotSha256: begin.snapshotSha256,
    target: begin.targetUrl,
    runs: runs.map((r) => ({
      run: r.run,
      command: r.command,
      undoes: r.undoes ?? null,
      undoneBy: undoneBy.get(r.run) ?? null,
      startedAt: r.startedAt,
      endedAt: r.endedAt ?? null,
      status: r.endedAt === undefined ? 'interrupted' : 'finished',
      ...Object.fromEntries(KINDS.map((k) => [k.runsKey, countsOf(r, k.object)])),
    })),
  };
}

/** The run an import writes: the newest when it was an interrupted import, else a new one. */
export function chooseImportRun(
  replay: JournalReplay | undefined,
  journalPath: string,
): { run: number; continuing: RunState | undefined } {
  const newest = replay?.runs.at(-1);
  if (newest !== undefined && newest.endedAt === undefined && newest.command === 'undo') {
    throw new UsageError(`An undo (run ${newest.run}) of this journal was interrupted: ${journalPath}`, {
      hint: 'Run the same undo command again to finish it, then re-run the import',
    });
  }
  if (newest !== undefined && newest.endedAt === undefined) return { run: newest.run, continuing: newest };
  return { run: (newest?.run ?? 0) + 1, continuing: undefined };
}

/** The run an undo writes (the newest when an interrupted undo) and the run it takes back; or none. */
export function chooseUndoRun(
  runs: readonly RunState[],
): { run: number; undoes: number; continuing: RunState | undefined } | undefined {
  const newest = runs.at(-1);
  if (newest?.command === 'undo' && newest.endedAt === undefined && newest.undoes !== undefined) {
    return { run: newest.run, undoes: newest.undoes, continuing: newest };
  }
  const undone = undoneRuns(runs);
  const target = [...runs].reverse().find((r) => r.command === 'import' && !undone.has(r.run));
  if (target === undefined) return undefined;
  return { run: (newest?.run ?? 0) + 1, undoes: target.run, continuing: undefined };
}

/** The runs a finished undo took back: the run undone -> the undo's run. */
function undoneRuns(runs: readonly RunState[]): Map<number, number> {
  const undoneBy = new Map<number, number>();
  for (const r of runs)
    if (r.command === 'undo' && r.endedAt !== undefined && r.undoes !== undefined)
      undoneBy.set(r.undoes, r.run);
  return undoneBy;
}
