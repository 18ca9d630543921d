// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:VAR}" is a literal overrides placeholder
/** The undo workflow (docs/undo.md): the newest run not yet undone, taken back as a run of its own. */
import { stat } from 'node:fs/promises';
import type { ClientFactory } from '../api/client-factory.js';
import type { HttpClient } from '../api/http.js';
import { createRetryBudget } from '../api/retry-policy.js';
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
import { checkWriteConfirmed } from '../protected.js';
import { loadShippedCatalog } from '../schema/catalog.js';
import { executeSteps, type WriteOutcome } from './execute.js';
import { openJournalRecordReader, replayJournalFile, writeKey } from './journal/replay.js';
import { normaliseTargetUrl, openJournal } from './journal/writer.js';
import { KINDS, type SyncKind, writersFor } from './kind.js';
import { type ChosenUndo, cannotReadJournal, chooseUndoRun } from './runs.js';
import { observedOutcome, outcomeRecord, Write } from './step.js';
import { createRateLimiter } from './throttle.js';
import {
  createRunHistory,
  type History,
  isWritingStep,
  loadUndoPayload,
  type ReferencedIds,
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
  readonly includeInDoubt?: boolean;
}

/** The outside world of {@link undoRun}. */
export interface UndoPorts {
  /** The target: `--to` when given, else `boundUrl` (the journal's). */
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
  /** Undefined for a step that writes nothing. */
  readonly outcome: UndoOutcome | undefined;
  readonly message?: string;
}

export type UndoEvent =
  | { readonly kind: 'refused'; readonly problems: readonly Problem[] }
  | {
      readonly kind: 'run-started';
      readonly target: string;
      readonly run: number;
      readonly undoes: number;
      /** Only the creates an earlier undo of `undoes` left in doubt (`--include-in-doubt`). */
      readonly onlyInDoubt: boolean;
      /** An interrupted undo being finished, with the `--include-in-doubt` it was started with. */
      readonly resuming: boolean;
      readonly includeInDoubt: boolean;
      readonly writes: number;
      readonly journal: string;
      readonly concurrency: number;
    }
  | { readonly kind: 'step-settled'; readonly line: UndoLine };

/** What an undo did (or would do). */
export type UndoResult =
  | {
      readonly kind: 'dry-run';
      readonly target: string;
      readonly undoes: number;
      readonly onlyInDoubt: boolean;
      readonly steps: readonly UndoStep[];
      readonly problems: readonly Problem[];
    }
  | {
      readonly kind: 'ran';
      readonly target: string;
      readonly run: number;
      readonly undoes: number;
      readonly onlyInDoubt: boolean;
      readonly lines: readonly UndoLine[];
      readonly journal: string;
      readonly stoppedBy: DdsError | undefined;
    }
  /** Every import run of the journal is undone already: nothing was written. */
  | { readonly kind: 'nothing'; readonly journal: string };

/** The journal, locked for the whole undo unless a dry run, its `begin`, and the undo to do. */
async function openForUndo(options: UndoOptions) {
  try {
    await stat(options.journal);
    const journal = options.dryRun ? undefined : await openJournal(options.journal, undefined);
    const replay = journal?.replay ?? (await replayJournalFile(options.journal))?.replay;
    journal?.releaseReplay();
    const begin = replay?.begin;
    if (replay === undefined || begin === undefined)
      throw new InputFileError(options.journal, 1, 'the journal is empty: the import wrote nothing to undo');
    return { journal, begin, runs: replay.runs, chosen: chooseUndoRun(replay.runs, options) };
  } catch (error) {
    // A typed error (a damaged journal, the lock held) says what it is; anything else is a read.
    if (isDdsError(error)) throw error;
    throw cannotReadJournal(options.journal, (error as NodeJS.ErrnoException).code ?? 'error');
  }
}

/** One step per object the run touched, planned as its kind's listing hands it out (not kept). */
async function planAgainstTarget(
  client: HttpClient,
  histories: readonly History[],
  contextOf: (h: History, references: ReferencedIds | undefined) => UndoContext,
  signal: AbortSignal,
): Promise<UndoStep[][]> {
  const byKind = KINDS.map((kind) => histories.filter((h) => h.object === kind.object));
  const named = new Set(KINDS.flatMap((k, i) => (byKind[i]?.length ? [k.references] : [])));
  const notedOf = new Map<string, Noted>();
  const stepsByKind: UndoStep[][] = [];
  for (const [i, kind] of KINDS.entries()) {
    const todo = byKind[i] ?? [];
    const noted = named.has(kind.object) ? new Noted() : undefined;
    if (noted !== undefined) notedOf.set(kind.object, noted);
    const references = kind.references === undefined ? undefined : notedOf.get(kind.references);
    const plan = (h: History, current: Readonly<Record<string, unknown>> | undefined) =>
      kind.undo(h, current, contextOf(h, references));
    const order = new Map(todo.map((h, j) => [h.name, j]));
    const planned = new Array<UndoStep | undefined>(todo.length);
    if (todo.length > 0 || noted !== undefined) {
      for await (const o of await kind.current(client, signal)) {
        if (typeof o.name !== 'string') continue;
        if (noted !== undefined && typeof o._id === 'string') noted.note(o.name, o._id);
        const j = order.get(o.name);
        if (j !== undefined && planned[j] === undefined) planned[j] = plan(todo[j] as History, o);
      }
    }
    const steps = todo.map((h, j) => planned[j] ?? plan(h, undefined));
    for (const s of steps) if (s.kind === 're-create') noted?.recreated.add(s.name);
    stepsByKind.push(steps);
  }
  return stepsByKind;
}

/** A named kind's objects in the target now, and those this undo creates again. */
class Noted implements ReferencedIds {
  readonly idByName = new Map<string, string | undefined>();
  readonly nameById = new Map<string, string>();
  readonly recreated = new Set<string>();

  note(name: string, id: string): void {
    this.idByName.set(name, id);
    this.nameById.set(id, name);
  }
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

/** Restores in {@link KINDS} order (a profile may name a connection restored), then deletes in reverse. */
function phasesOf(stepsByKind: readonly UndoStep[][]) {
  const phase = (restoring: boolean) => (kind: SyncKind, i: number) => {
    const wanted = (s: UndoStep) =>
      s.kind === 'delete-created' ? !restoring : restoring && isWritingStep(s);
    return { kind, restoring, steps: (stepsByKind[i] ?? []).filter(wanted) };
  };
  return [...KINDS.map(phase(true)), ...KINDS.map(phase(false)).reverse()];
}

/** Undo the newest run not yet undone. Throws PreflightError (after `refused`) and other typed errors. */
export async function undoRun(
  options: UndoOptions,
  ports: UndoPorts,
  onEvent: (event: UndoEvent) => void,
): Promise<UndoResult> {
  const { journal, begin, runs, chosen: first } = await openForUndo(options);
  const reader = openJournalRecordReader(options.journal);
  try {
    if (first === undefined) return { kind: 'nothing', journal: options.journal };
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
      const planFor = async (chosen: ChosenUndo) => {
        const history = createRunHistory(chosen.undoes, reader);
        let index = 0;
        await replayJournalFile(options.journal, {
          onRecord: (record, at) => history.add(record, index++, at),
        });
        // A run undone already whose creates were left in doubt: only those are taken back now.
        const histories = history
          .finish()
          .filter((h) => !chosen.onlyInDoubt || (h.firstOp === 'create' && h.inDoubt));
        // An interrupted undo finishes as it started (an earlier version's record does not say).
        const includeInDoubt = chosen.continuing?.includeInDoubt ?? options.includeInDoubt === true;
        const stepsByKind = await planAgainstTarget(
          client,
          histories,
          // One object per step, built whole (100 000 on a large undo): no spread copy of it.
          (h, references) => {
            const undone = chosen.continuing?.writes.get(writeKey(h.object, h.name));
            const putBackDone = undone?.op === 'update' && undone.state === 'done';
            return { catalog, overrides, includeInDoubt, putBackDone, references };
          },
          ports.signal,
        );
        return { chosen, stepsByKind, includeInDoubt };
      };
      let planned = await planFor(first);
      // In-doubt creates all gone or changed since write nothing: the run before is next.
      const passed = new Set<number>();
      while (
        planned.chosen.onlyInDoubt &&
        planned.chosen.continuing === undefined &&
        !planned.stepsByKind.flat().some(isWritingStep)
      ) {
        passed.add(planned.chosen.undoes);
        const next = chooseUndoRun(runs, { includeInDoubt: options.includeInDoubt, passed });
        if (next === undefined) return { kind: 'nothing', journal: options.journal };
        planned = await planFor(next);
      }
      const { chosen, stepsByKind, includeInDoubt } = planned;
      const steps = stepsByKind.flat();
      const problems = steps.flatMap((s) => (s.kind === 'invalid' ? s.problems : []));
      const writes = steps.filter(isWritingStep);
      // A dry run does not open the journal.
      if (journal === undefined)
        return {
          kind: 'dry-run',
          target: environment.label,
          undoes: chosen.undoes,
          onlyInDoubt: chosen.onlyInDoubt,
          steps,
          problems,
        };
      const refusal = writes.length > 0 && checkWriteConfirmed(environment, options.confirm, '--to');
      if (refusal) problems.push({ message: `${refusal.reason}; ${refusal.hint}` });
      if (problems.length > 0) {
        onEvent({ kind: 'refused', problems });
        throw new PreflightError(
          `Pre-flight refused the undo in ${environment.label}; nothing was sent`,
          problems,
          {
            // An object's problems are secrets or fields for the overrides; a run-wide one says its remedy.
            hint: problems.some((p) => p.entry !== undefined)
              ? 'Supply the secrets named above with --overrides (e.g. "${env:VAR}") and re-run; --dry-run shows the plan'
              : 'Do what the problem above says and re-run; --dry-run shows the plan',
          },
        );
      }

      // A write the undo being finished left in doubt, and the target shows as wanted now: its outcome.
      for (const s of steps) {
        const open = chosen.continuing?.writes.get(writeKey(s.object, s.name));
        if (s.kind !== 'reverted' || open?.state !== 'in-doubt') continue;
        const fields = { object: s.object, op: open.op, name: s.name, targetId: open.targetId };
        const settled = observedOutcome(s, fields, open.targetId);
        await journal.append(outcomeRecord(settled, chosen.run, new Date().toISOString()));
      }
      const concurrency = environment.concurrency ?? DEFAULT_IMPORT_CONCURRENCY;
      if (chosen.continuing === undefined)
        await journal.startRun(chosen.run, 'undo', chosen.undoes, options.includeInDoubt);
      onEvent({
        kind: 'run-started',
        target: environment.label,
        run: chosen.run,
        undoes: chosen.undoes,
        onlyInDoubt: chosen.onlyInDoubt,
        resuming: chosen.continuing !== undefined,
        includeInDoubt,
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
      let stoppedBy: DdsError | undefined;
      for (const phase of phasesOf(stepsByKind)) {
        if (phase.steps.length === 0) continue;
        const place = phase.restoring ? await phase.kind.placeUndoBodies?.(client, ports.signal) : undefined;
        const result = await executeSteps(phase.steps.map(undoWrite), deps, {
          concurrency: phase.kind.oneAtATime ? 1 : concurrency,
          load: (w) => loadUndoPayload(w.plan, place),
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
        onlyInDoubt: chosen.onlyInDoubt,
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

function lineOf(outcome: WriteOutcome<UndoStep>): UndoLine {
  const step = outcome.step.plan;
  if (outcome.kind === 'pending') return { step, outcome: 'pending' };
  if (outcome.kind === 'failed')
    return { step, outcome: 'failed', message: `HTTP ${outcome.httpStatus ?? '-'} ${outcome.message}` };
  const done: UndoOutcome =
    step.kind === 're-create' ? 'recreated' : step.kind === 'put-back' ? 'restored' : 'deleted';
  return { step, outcome: done };
}
