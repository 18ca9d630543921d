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
import { connectionIdsByName, listConnections } from '../api/connections.js';
import type { HttpClient } from '../api/http.js';
import { createRetryBudget } from '../api/retry-policy.js';
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
import type { ScanProfile } from '../model/scan-profile.js';
import { checkWriteConfirmed } from '../protected.js';
import { loadShippedCatalog } from '../schema/catalog.js';
import { executeSteps, type WriteOutcome, type WritePayload } from './execute.js';
import {
  type JournalRecordReader,
  openJournalRecordReader,
  replayJournalFile,
  writesOf,
} from './journal/replay.js';
import { normaliseTargetUrl, openJournal } from './journal/writer.js';
import { writersFor } from './kind.js';
import { connectionKind } from './kinds/connection.js';
import { type DataSourceRef, placeProfileBody, scanProfileKind } from './kinds/scan-profile.js';
import { cannotReadJournal, chooseUndoRun } from './runs.js';
import { Write } from './step.js';
import { createRateLimiter } from './throttle.js';
import {
  createRunHistory,
  type History,
  isWritingStep,
  type UndoContext,
  type UndoStep,
} from './undo-plan.js';

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

/**
 * The journal (locked for the whole undo unless a dry run: no import of it runs meanwhile, and it does
 * not change under the images read again from it), its `begin`, and the undo to do. Of the replay only
 * that is kept: every earlier run's states are let go before the undo runs.
 */
async function openForUndo(options: UndoOptions) {
  try {
    await stat(options.journal);
  } catch (error) {
    throw cannotReadJournal(options.journal, (error as NodeJS.ErrnoException).code ?? 'error');
  }
  try {
    const journal = options.dryRun ? undefined : await openJournal(options.journal, undefined);
    const replay = journal?.replay ?? (await replayJournalFile(options.journal))?.replay;
    journal?.releaseReplay();
    const begin = replay?.begin;
    if (replay === undefined || begin === undefined)
      throw new InputFileError(options.journal, 1, 'the journal is empty: the import wrote nothing to undo');
    return { journal, begin, chosen: chooseUndoRun(replay.runs) };
  } catch (error) {
    // A typed error (a damaged journal, the lock held, a full disk) says what it is; anything else is a read.
    if (isDdsError(error)) throw error;
    throw cannotReadJournal(options.journal, (error as NodeJS.ErrnoException).code ?? 'error');
  }
}

/** What run `run` did to each object, newest first; its images are read again through `reader`. */
async function readHistories(path: string, run: number, reader: JournalRecordReader): Promise<History[]> {
  const history = createRunHistory(run, reader);
  let index = 0;
  await replayJournalFile(path, { onRecord: (record, at) => history.add(record, index++, at) });
  return history.finish();
}

/**
 * One step per object the run touched, against the target as it is now: connections planned as the
 * listing hands them out (the listing is not kept), then scan profiles.
 */
async function planAgainstTarget(
  client: HttpClient,
  histories: readonly History[],
  context: (h: History) => UndoContext,
  signal: AbortSignal,
): Promise<{ connectionSteps: UndoStep[]; profileSteps: UndoStep[] }> {
  const idByName = new Map<string, string | undefined>();
  const nameById = new Map<string, string>();
  const connectionHistories = histories.filter((h) => h.object === 'connection');
  const profileHistories = histories.filter((h) => h.object === 'scan-profile');
  const order = new Map(connectionHistories.map((h, i) => [h.name, i]));
  const planned = new Array<UndoStep | undefined>(connectionHistories.length);
  for await (const c of listConnections(client, { signal })) {
    if (profileHistories.length > 0 && typeof c._id === 'string') {
      idByName.set(c.name, c._id);
      nameById.set(c._id, c.name);
    }
    const i = order.get(c.name);
    if (i === undefined || planned[i] !== undefined) continue;
    const h = connectionHistories[i] as History;
    planned[i] = connectionKind.undo(h, c, context(h));
  }
  const connectionSteps = connectionHistories.map(
    (h, i) => planned[i] ?? connectionKind.undo(h, undefined, context(h)),
  );
  if (profileHistories.length === 0) return { connectionSteps, profileSteps: [] };
  const byName = new Map<string, ScanProfile>();
  for (const p of await listScanProfiles(client, { signal }))
    if (typeof p.name === 'string' && !byName.has(p.name)) byName.set(p.name, p);
  const recreated = new Set(connectionSteps.filter((s) => s.kind === 're-create').map((s) => s.name));
  const profileSteps = profileHistories.map((h) =>
    scanProfileKind.undo(h, byName.get(h.name), {
      ...context(h),
      references: { idByName, nameById, recreated },
    }),
  );
  return { connectionSteps, profileSteps };
}

/** A writing undo step as the executor runs it. */
function undoWrite(step: UndoStep): Write<UndoStep> {
  return new Write(step, {
    object: step.object,
    op: step.kind === 're-create' ? 'create' : step.kind === 'put-back' ? 'update' : 'delete',
    name: step.name,
    targetId: 'targetId' in step ? step.targetId : undefined,
  });
}

/** A writing step's payload; a profile's `dataSourceList` placed on the connection ids `ids` now. */
function loadUndo(step: UndoStep, ids: ReadonlyMap<string, string | undefined>): WritePayload {
  if (step.kind === 'delete-created') return { before: step.before.load() ?? { name: step.name } };
  if (step.kind !== 're-create' && step.kind !== 'put-back')
    throw new Error(`not a writing step: ${step.kind}`);
  const body =
    step.refs === undefined
      ? step.body
      : placeProfileBody(
          step.body,
          step.refs as readonly DataSourceRef[],
          ids,
          ', so the profile cannot name it',
        );
  if (step.kind === 're-create') return { body, image: step.image };
  return { body, image: step.image, secretsSent: step.secretsSent, before: step.current };
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
  const { journal, begin, chosen } = await openForUndo(options);
  const reader = openJournalRecordReader(options.journal);
  try {
    if (chosen === undefined) return { kind: 'nothing', journal: options.journal };
    const histories = await readHistories(options.journal, chosen.undoes, reader);
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
      const { connectionSteps, profileSteps } = await planAgainstTarget(
        client,
        histories,
        (h) => ({
          catalog,
          overrides,
          includeInDoubt: options.includeInDoubt === true,
          putBackDone: undoChanges.get(h.name)?.op === 'update' && undoChanges.get(h.name)?.state === 'done',
        }),
        ports.signal,
      );
      const steps = [...connectionSteps, ...profileSteps];
      const problems = steps.flatMap((s) => (s.kind === 'invalid' ? s.problems : []));
      const writes = steps.filter(isWritingStep);
      // A dry run read the journal without opening it.
      if (journal === undefined)
        return { kind: 'dry-run', target: environment.label, undoes: chosen.undoes, steps, problems };
      const refusal = writes.length > 0 && checkWriteConfirmed(environment, options.confirm, '--to');
      if (refusal) problems.push({ message: `${refusal.reason}; ${refusal.hint}` });
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
      if (chosen.continuing === undefined) await journal.startRun(chosen.run, 'undo', chosen.undoes);
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
      const deps = {
        writers: writersFor(client),
        journal,
        run: chosen.run,
        limiter,
        budget,
        log: ports.log,
        signal: ports.signal,
      };
      const phases = [
        {
          steps: connectionSteps.filter((s) => s.kind === 're-create' || s.kind === 'put-back'),
          concurrency,
        },
        { steps: profileSteps.filter(isWritingStep), concurrency: 1 },
        { steps: connectionSteps.filter((s) => s.kind === 'delete-created'), concurrency },
      ];
      let stoppedBy: DdsError | undefined;
      let ids = new Map<string, string | undefined>();
      for (const phase of phases) {
        if (phase.steps.length === 0) continue;
        // A profile names the connections created again by the phase before: their ids are read now.
        if (phase.steps[0]?.object === 'scan-profile') ids = await connectionIdsByName(client, ports.signal);
        const result = await executeSteps(phase.steps.map(undoWrite), deps, {
          concurrency: phase.concurrency,
          load: (w) => loadUndo(w.plan, ids),
          onOutcome: (outcome) => onEvent({ kind: 'step-settled', line: lineOf(outcome) }),
        });
        for (const outcome of result.outcomes) lines.set(outcome.step.plan, lineOf(outcome));
        stoppedBy = result.stoppedBy;
        if (stoppedBy !== undefined) break;
      }
      if (stoppedBy === undefined) await journal.endRun(chosen.run);
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
  } finally {
    reader.close();
    await journal?.close();
  }
}

/** The line of a settled (or pending) step. */
function lineOf(outcome: WriteOutcome<UndoStep>): UndoLine {
  const step = outcome.step.plan;
  if (outcome.kind === 'pending') return { step, outcome: 'pending' };
  if (outcome.kind === 'failed')
    return { step, outcome: 'failed', message: `HTTP ${outcome.httpStatus ?? '-'} ${outcome.message}` };
  const done: UndoOutcome =
    step.kind === 're-create' ? 'recreated' : step.kind === 'put-back' ? 'restored' : 'deleted';
  return { step, outcome: done };
}
