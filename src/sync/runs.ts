/** The runs of a journal (`runs JOURNAL`, read only), and which run an import or an undo writes. */
import { InputFileError, UsageError } from '../errors.js';
import type { JournalObject } from './journal/records.js';
import {
  type JournalReplay,
  type RunCounts,
  type RunState,
  replayJournalFile,
  type WriteState,
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

/** The undo to do: the run it writes and the run it takes back (perhaps only its in-doubt creates). */
export interface ChosenUndo {
  readonly run: number;
  readonly undoes: number;
  /** An interrupted undo being finished. */
  readonly continuing: RunState | undefined;
  /** Undone already, its creates in doubt left: this undo takes back those creates only. */
  readonly onlyInDoubt: boolean;
}

/**
 * The run an undo writes (the newest when an interrupted undo) and the run it takes back; or none. With
 * `--include-in-doubt`, a run whose undo left creates in doubt counts as not yet undone, for those only.
 */
export function chooseUndoRun(
  runs: readonly RunState[],
  options: {
    readonly includeInDoubt?: boolean;
    /** Runs whose in-doubt creates are known to need nothing (gone, or changed since). */
    readonly passed?: ReadonlySet<number>;
  } = {},
): ChosenUndo | undefined {
  const newest = runs.at(-1);
  const undos = (run: number, before: number) =>
    runs.filter((r) => r.command === 'undo' && r.undoes === run && r.endedAt !== undefined && r.run < before);
  if (newest?.command === 'undo' && newest.endedAt === undefined && newest.undoes !== undefined) {
    const onlyInDoubt = undos(newest.undoes, newest.run).length > 0;
    return { run: newest.run, undoes: newest.undoes, continuing: newest, onlyInDoubt };
  }
  const next = (newest?.run ?? 0) + 1;
  const undone = undoneRuns(runs);
  for (const r of [...runs].reverse()) {
    if (r.command !== 'import') continue;
    if (!undone.has(r.run)) return { run: next, undoes: r.run, continuing: undefined, onlyInDoubt: false };
    const leftInDoubt =
      options.includeInDoubt === true &&
      options.passed?.has(r.run) !== true &&
      !undos(r.run, next).some((u) => u.includeInDoubt) &&
      [...r.writes.values()].some(isInDoubtCreate);
    if (leftInDoubt) return { run: next, undoes: r.run, continuing: undefined, onlyInDoubt: true };
  }
  return undefined;
}

/** A create whose answer was lost: found by a look-up, or never settled (an undo leaves it unless told). */
function isInDoubtCreate(w: WriteState): boolean {
  return w.op === 'create' && (w.state === 'in-doubt' || (w.state === 'done' && w.via === 'lookup'));
}

/** The runs a finished undo took back: the run undone -> the (newest) undo's run. */
function undoneRuns(runs: readonly RunState[]): Map<number, number> {
  const undoneBy = new Map<number, number>();
  for (const r of runs)
    if (r.command === 'undo' && r.endedAt !== undefined && r.undoes !== undefined)
      undoneBy.set(r.undoes, r.run);
  return undoneBy;
}
