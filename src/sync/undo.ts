// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:VAR}" is a literal overrides placeholder
/**
 * The undo workflow: takes back the newest run of a journal not yet undone (run it again for the one
 * before), connections and scan profiles alike. Each object the run touched becomes one step, decided
 * against the target as it is now (`undo-plan.ts`); the steps go through the executor
 * (`execute.ts`), journaled as a run of their own (`command: 'undo'`) in the same journal, so an
 * interrupted undo is finished by running it again, and an undone run is not undone twice.
 *
 * Order: connections put back or created again first (a profile created again may name them), then
 * scan profiles, then the connections the run created are deleted (after the profiles that named them).
 * The pre-flight names every secret missing (exit 3, nothing written) and refuses a protected target
 * without `--confirm`. When every run is undone, nothing is written.
 */
import { stat } from 'node:fs/promises';
import type { ClientFactory } from '../api/client-factory.js';
import { listConnectionKeys, listConnections } from '../api/connections.js';
import { createRetryBudget } from '../api/http.js';
import { listScanProfiles } from '../api/scan-profiles.js';
import type { ResolvedEnvironment } from '../config.js';
import {
  type DdsError,
  InputFileError,
  isDdsError,
  PreflightError,
  type Problem,
  UsageError,
} from '../errors.js';
import { DEFAULT_IMPORT_CONCURRENCY } from '../importer/import-types.js';
import { EMPTY_OVERRIDES, loadOverrides, resolveOverrides } from '../importer/overrides.js';
import type { Logger } from '../log.js';
import type { Connection } from '../model/connection.js';
import type { ScanProfile } from '../model/scan-profile.js';
import { checkWriteConfirmed } from '../protected.js';
import { loadShippedCatalog } from '../schema/catalog.js';
import { type ExecuteDeps, executeSteps, type WritePayload, type WriteStep } from './execute.js';
import type { BeginRecord } from './journal/records.js';
import {
  type JournalReplay,
  openJournalRecordReader,
  type RunState,
  replayJournalFile,
  writesOf,
} from './journal/replay.js';
import { type Journal, normaliseTargetUrl, openJournal } from './journal/writer.js';
import { connectionWriter } from './kinds/connection.js';
import { placeProfileBody, scanProfileWriter } from './kinds/scan-profile.js';
import { cannotReadJournal, undoneRuns } from './runs.js';
import { createRateLimiter } from './throttle.js';
import {
  createRunHistory,
  type History,
  isWritingStep,
  planConnectionUndo,
  planProfileUndo,
  type UndoStep,
} from './undo-plan.js';

export { isWritingStep, type UndoStep } from './undo-plan.js';

/** The options of an undo, checked once (by `cli/undo.ts`); paths absolute. */
export interface UndoOptions {
  readonly journal: string;
  readonly overrides: string | undefined;
  readonly dryRun: boolean;
  readonly confirm: string | undefined;
  readonly schemas: string | undefined;
  /** Delete objects whose create was in doubt too (maybe someone else's). */
  readonly includeInDoubt?: boolean;
}

/** The outside world of {@link undoRun}. */
export interface UndoPorts {
  /** Resolve the target: `--to` when given, else `boundUrl` (the journal's target), with the usual token. */
  readonly resolveTarget: (boundUrl: string) => Promise<ResolvedEnvironment>;
  readonly createClient: ClientFactory;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly log: Logger;
  readonly signal: AbortSignal;
}

/** What happened to one step that writes. */
export type UndoOutcome = 'deleted' | 'restored' | 'recreated' | 'failed' | 'pending';

/** One line of the undo's result. */
export interface UndoLine {
  readonly step: UndoStep;
  /** For writing steps: what happened; undefined for steps that write nothing. */
  readonly outcome: UndoOutcome | undefined;
  readonly message?: string;
}

/** Progress of an undo. */
export type UndoEvent =
  | { readonly kind: 'refused'; readonly problems: readonly Problem[] }
  | {
      readonly kind: 'run-started';
      readonly target: string;
      /** The run that takes the other back, and the run taken back. */
      readonly run: number;
      readonly undoes: number;
      readonly writes: number;
      readonly journal: string;
      /** Steps in flight at once (the environment's `concurrency`, default 4). */
      readonly concurrency: number;
    }
  | { readonly kind: 'step-settled'; readonly line: UndoLine };

/** What an undo did (or would do). */
export type UndoResult =
  | {
      readonly kind: 'dry-run';
      readonly target: string;
      readonly undoes: number;
      readonly steps: readonly UndoStep[];
      readonly problems: readonly Problem[];
    }
  | {
      readonly kind: 'ran';
      readonly target: string;
      readonly run: number;
      readonly undoes: number;
      readonly lines: readonly UndoLine[];
      readonly journal: string;
      readonly stoppedBy: DdsError | undefined;
    }
  /** Every import run of the journal is undone already: nothing was written. */
  | { readonly kind: 'nothing'; readonly journal: string };

/** The undo to do: an interrupted one to finish, or the newest import run not undone yet. */
function chooseUndo(
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

/** An undo step as the executor runs it. */
class UndoWrite implements WriteStep {
  readonly op: 'create' | 'update' | 'delete';
  readonly object: UndoStep['object'];
  readonly name: string;
  readonly targetName: string;
  readonly targetId: string | undefined;
  readonly inDoubt = false;

  constructor(
    readonly step: UndoStep,
    /** The target's connection ids now (a profile's sources are placed when it is sent). */
    private readonly idByName?: () => ReadonlyMap<string, string | undefined>,
  ) {
    this.op = step.kind === 're-create' ? 'create' : step.kind === 'put-back' ? 'update' : 'delete';
    this.object = step.object;
    this.name = step.name;
    this.targetName = step.name;
    this.targetId = 'targetId' in step ? step.targetId : undefined;
  }

  load(): WritePayload {
    const step = this.step;
    switch (step.kind) {
      case 're-create':
        return { body: this.placed(step), image: step.image };
      case 'put-back':
        return {
          body: this.placed(step),
          image: step.image,
          secretsSent: step.secretsSent,
          before: step.current,
        };
      case 'delete-created':
        return { before: step.before.load() ?? { name: step.name } };
      default:
        throw new Error(`not a writing step: ${step.kind}`);
    }
  }

  /** The body, a profile's `dataSourceList` placed on the connections the target has now. */
  private placed(
    step: Extract<UndoStep, { kind: 're-create' | 'put-back' }>,
  ): Readonly<Record<string, unknown>> {
    if (step.dataSources === undefined || this.idByName === undefined) return step.body;
    return placeProfileBody(step.body, step.dataSources, this.idByName(), ', so the profile cannot name it');
  }
}

/**
 * Undo the newest run of `options.journal` not yet undone (see the module comment). Throws UsageError (a
 * `--to` that is not the journal's target), InputFileError (no journal, a damaged one), PreflightError
 * (after a `refused` event) and the typed errors of the layers below.
 */
export async function undoRun(
  options: UndoOptions,
  ports: UndoPorts,
  onEvent: (event: UndoEvent) => void,
): Promise<UndoResult> {
  try {
    await stat(options.journal);
  } catch (error) {
    throw cannotReadJournal(options.journal, (error as NodeJS.ErrnoException).code ?? 'error');
  }
  let journal: Journal | undefined;
  let replay: JournalReplay | undefined;
  try {
    // Locked for the whole undo: no import of it runs meanwhile, and it does not change under the
    // images read again from it.
    if (options.dryRun) replay = (await replayJournalFile(options.journal))?.replay;
    else {
      journal = await openJournal(options.journal, undefined);
      replay = journal.replay;
    }
  } catch (error) {
    // A typed error (a damaged journal, the lock held, a full disk) says what it is; anything else is a read.
    if (isDdsError(error)) throw error;
    throw cannotReadJournal(options.journal, (error as NodeJS.ErrnoException).code ?? 'error');
  }
  const begin = replay?.begin;
  if (replay === undefined || begin === undefined)
    throw new InputFileError(options.journal, 1, 'the journal is empty: the import wrote nothing to undo');
  // What the undo needs of the replay; the rest (every earlier run's states) is let go before it runs.
  const chosen = chooseUndo(replay.runs);
  replay = undefined;
  journal?.releaseReplay();
  const reader = openJournalRecordReader(options.journal);
  try {
    return await undoFromReplay(options, ports, onEvent, begin, chosen, journal, reader);
  } finally {
    reader.close();
    await journal?.close();
  }
}

async function undoFromReplay(
  options: UndoOptions,
  ports: UndoPorts,
  onEvent: (event: UndoEvent) => void,
  begin: BeginRecord,
  chosen: ReturnType<typeof chooseUndo>,
  journal: Journal | undefined,
  reader: ReturnType<typeof openJournalRecordReader>,
): Promise<UndoResult> {
  if (chosen === undefined) return { kind: 'nothing', journal: options.journal };

  // The run's records, read again (images stay in the file, read when a step needs them).
  const history = createRunHistory(chosen.undoes, reader);
  let index = 0;
  await replayJournalFile(options.journal, {
    onRecord: (record, at) => history.add(record, index++, at),
  });
  const histories = history.finish();

  const rawOverrides = options.overrides ? await loadOverrides(options.overrides) : EMPTY_OVERRIDES;
  const overrides = resolveOverrides(rawOverrides, ports.env);
  // Connections put back are checked against their templates before anything is sent.
  const catalog = await loadShippedCatalog(options.schemas);

  const environment = await ports.resolveTarget(begin.targetUrl);
  if (normaliseTargetUrl(environment.url) !== normaliseTargetUrl(begin.targetUrl)) {
    throw new UsageError(
      `--to names ${environment.label} (${environment.url}), but the journal belongs to ${begin.targetUrl}`,
      { hint: 'Leave --to out (the journal names its target) or name that environment' },
    );
  }
  const limiter = createRateLimiter({ rate: environment.rate });
  const budget = createRetryBudget(20);
  const client = ports.createClient(environment, {
    retryBudget: budget,
    onRateLimited: (ms) => limiter.onRateLimited(ms),
  });
  try {
    const undoChanges = writesOf(chosen.continuing, 'connection');
    const idByName = new Map<string, string | undefined>();
    const nameById = new Map<string, string>();
    const connectionHistories = histories.filter((h) => h.object === 'connection');
    const profileHistories = histories.filter((h) => h.object === 'scan-profile');
    const context = (h: History) => ({
      catalog,
      overrides,
      includeInDoubt: options.includeInDoubt === true,
      putBackDone: undoChanges.get(h.name)?.op === 'update' && undoChanges.get(h.name)?.state === 'done',
    });
    // Each connection the run touched is planned as the listing hands it out (the listing is not kept).
    const order = new Map(connectionHistories.map((h, i) => [h.name, i]));
    const planned = new Array<UndoStep | undefined>(connectionHistories.length);
    for await (const c of listConnections(client, { signal: ports.signal })) {
      if (profileHistories.length > 0 && typeof c._id === 'string') {
        idByName.set(c.name, c._id);
        nameById.set(c._id, c.name);
      }
      const i = order.get(c.name);
      if (i === undefined || planned[i] !== undefined) continue;
      planned[i] = planConnectionUndo(
        connectionHistories[i] as History,
        c as Connection,
        context(connectionHistories[i] as History),
      );
    }
    const connectionSteps = connectionHistories.map(
      (h, i) => planned[i] ?? planConnectionUndo(h, undefined, context(h)),
    );
    let profileSteps: UndoStep[] = [];
    if (profileHistories.length > 0) {
      const profiles = await listScanProfiles(client, { signal: ports.signal });
      const byName = new Map<string, ScanProfile>();
      for (const p of profiles) if (typeof p.name === 'string' && !byName.has(p.name)) byName.set(p.name, p);
      const recreated = new Set(connectionSteps.filter((s) => s.kind === 're-create').map((s) => s.name));
      profileSteps = profileHistories.map((h) =>
        planProfileUndo(h, byName.get(h.name), { idByName, nameById }, { ...context(h), recreated }),
      );
    }
    const steps = [...connectionSteps, ...profileSteps];
    const problems = steps.flatMap((s) => (s.kind === 'invalid' ? s.problems : []));
    const writes = steps.filter(isWritingStep);
    if (!options.dryRun && writes.length > 0) {
      const refusal = checkWriteConfirmed(environment, options.confirm, '--to');
      if (refusal) problems.push({ message: `${refusal.reason}; ${refusal.hint}` });
    }
    if (options.dryRun)
      return { kind: 'dry-run', target: environment.label, undoes: chosen.undoes, steps, problems };
    const active = journal;
    if (active === undefined) throw new Error('journal not open');
    if (problems.length > 0) {
      onEvent({ kind: 'refused', problems });
      throw new PreflightError(
        `Pre-flight refused the undo in ${environment.label}; nothing was sent`,
        problems,
        {
          hint: 'Supply the secrets named above with --overrides (e.g. "${env:VAR}") and re-run; --dry-run shows the plan',
        },
      );
    }

    const concurrency = environment.concurrency ?? DEFAULT_IMPORT_CONCURRENCY;
    if (chosen.continuing === undefined) await active.startRun(chosen.run, 'undo', chosen.undoes);
    onEvent({
      kind: 'run-started',
      target: environment.label,
      run: chosen.run,
      undoes: chosen.undoes,
      writes: writes.length,
      journal: options.journal,
      concurrency,
    });
    budget.extend(Math.max(30, Math.ceil(writes.length / 10)));
    const lines = new Map<UndoStep, UndoLine>(
      steps.map((s) => [s, { step: s, outcome: isWritingStep(s) ? 'pending' : undefined }]),
    );
    const deps: ExecuteDeps = {
      writers: { connection: connectionWriter(client), 'scan-profile': scanProfileWriter(client) },
      journal: active,
      run: chosen.run,
      limiter,
      budget,
      log: ports.log,
      signal: ports.signal,
    };
    const phases: { readonly steps: UndoStep[]; readonly concurrency: number }[] = [
      { steps: connectionSteps.filter((s) => s.kind === 're-create' || s.kind === 'put-back'), concurrency },
      { steps: profileSteps.filter(isWritingStep), concurrency: 1 },
      { steps: connectionSteps.filter((s) => s.kind === 'delete-created'), concurrency },
    ];
    let stoppedBy: DdsError | undefined;
    let idsNow: Map<string, string | undefined> | undefined;
    const idsOf = () => idsNow ?? idByName;
    for (const [index, phase] of phases.entries()) {
      if (phase.steps.length === 0 || stoppedBy !== undefined) continue;
      if (index === 1) {
        // The connections created again have their ids now.
        idsNow = new Map((await listConnectionKeys(client, ports.signal)).map((c) => [c.name, c._id]));
      }
      const result = await executeSteps(
        phase.steps.map((s) => new UndoWrite(s, idsOf)),
        {
          ...deps,
          onOutcome: (outcome) =>
            onEvent({ kind: 'step-settled', line: lineOf((outcome.step as UndoWrite).step, outcome) }),
        },
        { concurrency: phase.concurrency },
      );
      for (const outcome of result.outcomes) lines.set(outcome.step.step, lineOf(outcome.step.step, outcome));
      stoppedBy = result.stoppedBy;
    }
    if (stoppedBy === undefined) await active.endRun(chosen.run);
    return {
      kind: 'ran',
      target: environment.label,
      run: chosen.run,
      undoes: chosen.undoes,
      lines: steps.map((s) => lines.get(s) as UndoLine),
      journal: options.journal,
      stoppedBy,
    };
  } finally {
    client.close();
  }
}

/** The line of a settled (or pending) step. */
function lineOf(step: UndoStep, outcome: Parameters<NonNullable<ExecuteDeps['onOutcome']>>[0]): UndoLine {
  if (outcome.kind === 'pending') return { step, outcome: 'pending' };
  if (outcome.kind === 'failed')
    return { step, outcome: 'failed', message: `HTTP ${outcome.httpStatus ?? '-'} ${outcome.message}` };
  const done: UndoOutcome =
    step.kind === 're-create' ? 'recreated' : step.kind === 'put-back' ? 'restored' : 'deleted';
  return { step, outcome: done };
}
