// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:VAR}" is a literal overrides placeholder
/**
 * The undo workflow: takes back what the import that wrote a journal did, newest first.
 *
 * From the import journal, per connection (by the name it has in the target), the state before the run:
 * absent when the run's first write to it was a create, else the masked before-image of its first
 * update or delete. Against the target as it is now, each becomes one step:
 * - created by the run: `delete-created` when it still matches what was created (the last image the run
 *   wrote, compared as `diff` compares), `left` (reported, exit 1) when it was changed since, nothing
 *   when it is gone;
 * - updated or deleted by the run: `put-back` (PUT of the before-image; a masked secret is left out, so
 *   the service keeps the stored one, unless the run sent that secret: then `--overrides` must supply its
 *   earlier value) when it differs, `re-create` (POST of the before-image, secrets from `--overrides`) when
 *   it is gone, nothing when it already equals the before-image.
 * The pre-flight names every secret missing (exit 3, nothing written) and refuses a protected target
 * without `--confirm`. The undo is journaled in `<journal>.undo.jsonl` with the import's own record
 * kinds and runners (intent before each write, outcome after; a create in doubt is looked up by name),
 * so it is resumable; since every step is decided from the target's state, a second undo sends nothing.
 */
import { readFile, unlink } from 'node:fs/promises';
import type { ClientFactory } from '../api/client-factory.js';
import {
  createConnection,
  deleteConnection,
  getConnectionByName,
  listConnections,
  updateConnection,
} from '../api/connections.js';
import { createRetryBudget } from '../api/http.js';
import type { ResolvedEnvironment } from '../config.js';
import {
  dropMaskedValues,
  fillMaskedForCheck,
  findClearSecrets,
  makeSafeImage,
  readPointer,
} from '../connections/images.js';
import { stripServerManaged } from '../connections/server-managed.js';
import { findChangedFields } from '../diff/compare.js';
import { type DdsError, InputFileError, PreflightError, type Problem, UsageError } from '../errors.js';
import { runChanges } from '../importer/converge-run.js';
import {
  type Journal,
  type JournalRecord,
  normaliseTargetUrl,
  openJournal,
  peekJournal,
  replayJournal,
  type SafeImage,
} from '../importer/journal.js';
import {
  applyOverrides,
  EMPTY_OVERRIDES,
  loadOverrides,
  type Overrides,
  resolveOverrides,
} from '../importer/overrides.js';
import { type ChangeStep, heldSource, type SendStep } from '../importer/plan.js';
import { checkEntryForSend } from '../importer/preflight.js';
import { runImport } from '../importer/run.js';
import { createRateLimiter } from '../importer/throttle.js';
import type { Logger } from '../log.js';
import type { Connection } from '../model/connection.js';
import { checkWriteConfirmed } from '../protected.js';
import { loadShippedCatalog, type TemplateCatalog } from '../schema/catalog.js';
import { isMasked, registerSecretsOf } from '../secrets.js';
import { TOOL_NAME, TOOL_VERSION } from '../version.js';

/** The options of an undo, checked once (by `cli/undo.ts`); paths absolute. */
export interface UndoOptions {
  readonly journal: string;
  readonly overrides: string | undefined;
  readonly dryRun: boolean;
  readonly confirm: string | undefined;
  readonly schemas: string | undefined;
}

/** The outside world of {@link undoImport}. */
export interface UndoPorts {
  /** Resolve the target: `--to` when given, else `boundUrl` (the journal's target), with the usual token. */
  readonly resolveTarget: (boundUrl: string) => Promise<ResolvedEnvironment>;
  readonly createClient: ClientFactory;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly log: Logger;
  readonly signal: AbortSignal;
}

interface StepBase {
  /** The connection's name in the target. */
  readonly name: string;
  readonly type: string;
}

/** One step of an undo. */
export type UndoStep =
  /** The run created it and it still matches: DELETE. */
  | (StepBase & { readonly kind: 'delete-created'; readonly current: SafeImage })
  /** The run updated (or deleted, and someone re-created) it: PUT of the before-image. */
  | (StepBase & {
      readonly kind: 'put-back';
      readonly body: Readonly<Record<string, unknown>>;
      readonly fields: readonly string[];
      readonly current: SafeImage;
      /** The body, secrets masked; the secrets it sends in clear (JSON pointers). */
      readonly image: SafeImage;
      readonly secretsSent: readonly string[];
    })
  /** The run deleted it: POST of the before-image. */
  | (StepBase & {
      readonly kind: 're-create';
      readonly body: Readonly<Record<string, unknown>>;
      readonly image: SafeImage;
    })
  /** The run created it, but it changed since: left alone and reported. */
  | (StepBase & { readonly kind: 'left'; readonly reason: string })
  /** Already as before the run (reverted earlier, or never applied). */
  | (StepBase & { readonly kind: 'reverted' })
  /** Cannot be reverted as it stands (a secret missing, a template problem): a pre-flight problem. */
  | (StepBase & { readonly kind: 'invalid'; readonly problems: readonly Problem[] });

/** What happened to one step that writes. */
export type UndoOutcome = 'deleted' | 'restored' | 'recreated' | 'failed' | 'pending';

/** One line of the undo's result. */
export interface UndoLine {
  readonly step: UndoStep;
  /** For writing steps of a run: what happened; undefined for steps that write nothing. */
  readonly outcome: UndoOutcome | undefined;
  readonly message?: string;
}

/** Progress of an undo. */
export type UndoEvent =
  | { readonly kind: 'skipped-records'; readonly object: string; readonly count: number }
  | { readonly kind: 'refused'; readonly problems: readonly Problem[] }
  | {
      readonly kind: 'run-started';
      readonly target: string;
      readonly writes: number;
      readonly journal: string;
    }
  | { readonly kind: 'step-settled'; readonly line: UndoLine };

/** What an undo did (or would do). */
export type UndoResult =
  | {
      readonly kind: 'dry-run';
      readonly target: string;
      readonly steps: readonly UndoStep[];
      readonly problems: readonly Problem[];
    }
  | {
      readonly kind: 'ran';
      readonly target: string;
      readonly lines: readonly UndoLine[];
      readonly journal: string;
      readonly stoppedBy: DdsError | undefined;
    };

/** The undo journal of an import journal. */
export function undoJournalPath(importJournal: string): string {
  return `${importJournal}.undo.jsonl`;
}

/** True for steps that send a request. */
export function isWritingStep(step: UndoStep): boolean {
  return step.kind === 'delete-created' || step.kind === 'put-back' || step.kind === 're-create';
}

/** What the import journal says one connection went through. */
interface History {
  readonly name: string;
  type: string;
  readonly firstOp: 'create' | 'update' | 'delete';
  readonly firstBefore: SafeImage | undefined;
  /** The last image the run wrote (create or update); undefined after a delete or in an old journal. */
  lastImage: SafeImage | undefined;
  readonly secretsSent: Set<string>;
  lastIndex: number;
  applied: boolean;
  pending: boolean;
}

/** Per connection, what the run did, newest first (pure). Other objects' records are counted apart. */
export function readRunHistory(records: readonly JournalRecord[]): {
  histories: History[];
  skipped: Map<string, number>;
} {
  const byName = new Map<string, History>();
  const skipped = new Map<string, number>();
  records.forEach((record, index) => {
    if (record.kind !== 'intent' && record.kind !== 'outcome') return;
    if (record.object !== 'connection') {
      if (record.kind === 'intent') skipped.set(record.object, (skipped.get(record.object) ?? 0) + 1);
      return;
    }
    const key = record.targetName;
    if (record.kind === 'intent') {
      let h = byName.get(key);
      if (h === undefined) {
        const firstBefore = record.op === 'create' ? undefined : record.before;
        const type = typeof firstBefore?.type === 'string' ? firstBefore.type : '';
        h = {
          name: key,
          type,
          firstOp: record.op,
          firstBefore,
          lastImage: undefined,
          secretsSent: new Set(),
          lastIndex: index,
          applied: false,
          pending: false,
        };
        byName.set(key, h);
      }
      h.lastIndex = index;
      h.pending = true;
      if (record.op === 'create') h.lastImage = record.image;
      else if (record.op === 'update') {
        h.lastImage = record.image;
        for (const p of record.secretsSent) h.secretsSent.add(p);
      } else h.lastImage = undefined;
      const imageType = h.lastImage?.type;
      if (h.type === '' && typeof imageType === 'string') h.type = imageType;
      return;
    }
    const h = byName.get(key);
    if (h === undefined) return;
    h.pending = false;
    if (record.result !== 'failed') h.applied = true;
    h.lastIndex = index;
  });
  const histories = [...byName.values()]
    .filter((h) => h.applied || h.pending)
    .sort((a, b) => b.lastIndex - a.lastIndex);
  return { histories, skipped };
}

/** Decide the step of one connection against the target's current object (pure). */
export function planUndoStep(
  h: History,
  current: Connection | undefined,
  context: {
    readonly catalog: TemplateCatalog;
    readonly overrides: Overrides;
    /** True when this undo's own journal says the put-back of this name was applied. */
    readonly putBackDone: boolean;
  },
): UndoStep {
  const { catalog, overrides } = context;
  const secretFields = (type: string) => catalog.secretFields(type);
  const base = { name: h.name, type: h.type };
  if (h.firstOp === 'create') {
    if (current === undefined) return { ...base, kind: 'reverted' };
    if (h.lastImage === undefined) {
      return {
        ...base,
        kind: 'left',
        reason: 'the journal holds no image of what was created (older journal)',
      };
    }
    const fields = findChangedFields(h.lastImage as Connection, current, secretFields);
    if (fields.length > 0) {
      return {
        ...base,
        kind: 'left',
        reason: `changed since the import created it (${fields.map((f) => f.path).join(', ')})`,
      };
    }
    return { ...base, kind: 'delete-created', current: makeSafeImage(current, secretFields(h.type)) };
  }
  const before = h.firstBefore ?? {};
  const restored = applyOverrides(
    { ...(stripServerManaged(before) as Connection), name: h.name, type: h.type },
    overrides,
  ) as Connection;
  registerSecretsOf(restored, secretFields(h.type));
  const entry = { name: h.name, type: h.type, sourceId: undefined, body: restored };
  if (current === undefined) {
    const problems = checkEntryForSend(entry, catalog).problems;
    if (problems.length > 0) return { ...base, kind: 'invalid', problems };
    return {
      ...base,
      kind: 're-create',
      body: restored,
      image: makeSafeImage(restored, secretFields(h.type)),
    };
  }
  const fields = findChangedFields(before as Connection, current, secretFields);
  const secretsToPutBack = context.putBackDone ? [] : [...h.secretsSent];
  if (fields.length === 0 && secretsToPutBack.length === 0) return { ...base, kind: 'reverted' };
  const problems: Problem[] = [];
  for (const pointer of secretsToPutBack) {
    const value = readPointer(restored, pointer);
    if (value === undefined || value === null || value === '' || isMasked(value)) {
      problems.push({
        entry: h.name,
        type: h.type,
        path: pointer,
        message: 'the import changed this secret; supply its earlier value with --overrides',
      });
    }
  }
  problems.push(...checkEntryForSend({ ...entry, body: fillMaskedForCheck(restored) }, catalog).problems);
  if (problems.length > 0) return { ...base, kind: 'invalid', problems };
  const body = dropMaskedValues(restored).body;
  return {
    ...base,
    kind: 'put-back',
    body,
    fields: fields.map((f) => f.path),
    current: makeSafeImage(current, secretFields(h.type)),
    image: makeSafeImage(body, secretFields(h.type)),
    secretsSent: findClearSecrets(body, secretFields(h.type)),
  };
}

/**
 * Undo the import that wrote `options.journal` (see the module comment). Throws UsageError (a `--to`
 * that is not the journal's target), InputFileError (no journal, a damaged one), PreflightError (after a
 * `refused` event) and the typed errors of the layers below.
 */
export async function undoImport(
  options: UndoOptions,
  ports: UndoPorts,
  onEvent: (event: UndoEvent) => void,
): Promise<UndoResult> {
  let text: string;
  try {
    text = await readFile(options.journal, 'utf8');
  } catch (error) {
    throw new InputFileError(
      options.journal,
      undefined,
      `cannot read the journal (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      {
        hint: 'Pass the journal the import wrote (default <snapshot>.<target host>.journal.jsonl)',
      },
    );
  }
  const replay = replayJournal(text, options.journal);
  const begin = replay.begin;
  if (begin === undefined) {
    throw new InputFileError(options.journal, 1, 'the journal is empty: the import wrote nothing to undo');
  }
  const { histories, skipped } = readRunHistory(replay.records);
  for (const [object, count] of skipped) onEvent({ kind: 'skipped-records', object, count });

  const rawOverrides = options.overrides ? await loadOverrides(options.overrides) : EMPTY_OVERRIDES;
  const { overrides } = resolveOverrides(rawOverrides, ports.env);
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
  const binding = { snapshotSha256: begin.snapshotSha256, targetUrl: begin.targetUrl };
  const journalPath = undoJournalPath(options.journal);
  let journal: Journal | undefined;
  try {
    if (!options.dryRun) {
      journal = await openJournal(journalPath, binding, { tool: `${TOOL_NAME} ${TOOL_VERSION}` });
    }
    const undoReplay = journal ? journal.replay : await peekJournal(journalPath, binding);
    const undoChanges = undoReplay?.changes ?? new Map();

    const current = new Map<string, Connection>();
    for await (const c of listConnections(client, { signal: ports.signal })) current.set(c.name, c);

    const steps = histories.map((h) =>
      planUndoStep(h, current.get(h.name), {
        catalog,
        overrides,
        putBackDone: undoChanges.get(h.name)?.op === 'update' && undoChanges.get(h.name)?.state === 'done',
      }),
    );
    const problems = steps.flatMap((s) => (s.kind === 'invalid' ? s.problems : []));
    const writes = steps.filter(isWritingStep);
    if (!options.dryRun && writes.length > 0) {
      const refusal = checkWriteConfirmed(environment, options.confirm, '--to');
      if (refusal) problems.push({ message: `${refusal.reason}; ${refusal.hint}` });
    }
    if (options.dryRun) return { kind: 'dry-run', target: environment.label, steps, problems };
    const active = journal;
    if (active === undefined) throw new Error('undo journal not open');
    if (problems.length > 0) {
      onEvent({ kind: 'refused', problems });
      if (active.fresh) {
        await unlink(active.path).catch(() => undefined);
        await active.close();
      }
      throw new PreflightError(
        `Pre-flight refused the undo in ${environment.label}; nothing was sent`,
        problems,
        {
          hint: 'Supply the secrets named above with --overrides (e.g. "${env:VAR}") and re-run; --dry-run shows the plan',
        },
      );
    }

    onEvent({ kind: 'run-started', target: environment.label, writes: writes.length, journal: journalPath });
    budget.extend(Math.max(30, Math.ceil(writes.length / 10)));
    const lines: UndoLine[] = [];
    let stoppedBy: DdsError | undefined;
    for (const step of steps) {
      if (stoppedBy !== undefined || !isWritingStep(step)) {
        const line: UndoLine = { step, outcome: isWritingStep(step) ? 'pending' : undefined };
        lines.push(line);
        continue;
      }
      const line = await runUndoStep(step, { client, journal: active, limiter, budget, ports });
      stoppedBy = line.stoppedBy;
      lines.push(line.line);
      onEvent({ kind: 'step-settled', line: line.line });
    }
    await active.close();
    return { kind: 'ran', target: environment.label, lines, journal: journalPath, stoppedBy };
  } finally {
    await journal?.close();
    client.close();
  }
}

/** Run one writing step through the import's runners (journaled: intent, request, outcome). */
async function runUndoStep(
  step: UndoStep,
  deps: {
    readonly client: ReturnType<ClientFactory>;
    readonly journal: Journal;
    readonly limiter: ReturnType<typeof createRateLimiter>;
    readonly budget: ReturnType<typeof createRetryBudget>;
    readonly ports: UndoPorts;
  },
): Promise<{ line: UndoLine; stoppedBy: DdsError | undefined }> {
  const { client, journal, limiter, ports } = deps;
  const none = { sourceId: undefined, targetId: undefined } as const;
  if (step.kind === 're-create') {
    const send: SendStep = {
      kind: 'create',
      name: step.name,
      type: step.type,
      sourceId: undefined,
      targetName: step.name,
      source: heldSource({ body: step.body, image: step.image }),
    };
    const result = await runImport(
      [send],
      {
        target: {
          create: (body) => createConnection(client, body),
          lookup: (name, signal) => getConnectionByName(client, name, { signal }),
        },
        journal,
        limiter,
        budget: deps.budget,
        log: ports.log,
        signal: ports.signal,
      },
      { concurrency: 1 },
    );
    const outcome = result.outcomes[0];
    const line: UndoLine =
      outcome?.kind === 'created'
        ? { step, outcome: 'recreated' }
        : outcome?.kind === 'failed'
          ? { step, outcome: 'failed', message: `HTTP ${outcome.httpStatus ?? '-'} ${outcome.message}` }
          : { step, outcome: 'pending' };
    return { line, stoppedBy: result.stoppedBy };
  }
  let change: ChangeStep;
  if (step.kind === 'put-back') {
    change = {
      kind: 'update',
      name: step.name,
      type: step.type,
      ...none,
      targetName: step.name,
      body: step.body,
      fields: step.fields.map((path) => ({ path })),
      before: step.current,
      image: step.image,
      secretsSent: step.secretsSent,
    };
  } else if (step.kind === 'delete-created') {
    change = {
      kind: 'delete',
      name: step.name,
      type: step.type,
      ...none,
      targetName: step.name,
      before: step.current,
    };
  } else {
    throw new Error(`not a writing step: ${step.kind}`);
  }
  const result = await runChanges([change], {
    target: {
      update: (name, body, signal) => updateConnection(client, name, { ...body }, { signal }),
      remove: (name, signal) => deleteConnection(client, name, { signal }),
    },
    journal,
    limiter,
    signal: ports.signal,
    concurrency: 1,
  });
  const outcome = result.outcomes[0];
  const line: UndoLine =
    outcome?.kind === 'updated'
      ? { step, outcome: 'restored' }
      : outcome?.kind === 'deleted'
        ? { step, outcome: 'deleted' }
        : outcome?.kind === 'failed'
          ? { step, outcome: 'failed', message: `HTTP ${outcome.httpStatus ?? '-'} ${outcome.message}` }
          : { step, outcome: 'pending' };
  return { line, stoppedBy: result.stoppedBy };
}
