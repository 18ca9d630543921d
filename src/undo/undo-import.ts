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
import { stat, unlink } from 'node:fs/promises';
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
import { DEFAULT_IMPORT_CONCURRENCY } from '../importer/import-snapshot.js';
import {
  type Journal,
  type JournalRecord,
  type JournalRecordReader,
  lockJournal,
  normaliseTargetUrl,
  openJournal,
  openJournalRecordReader,
  peekJournal,
  type RecordPlace,
  replayJournalFile,
  type SafeImage,
} from '../importer/journal.js';
import { forEachLimited } from '../importer/limited.js';
import {
  applyOverrides,
  EMPTY_OVERRIDES,
  loadOverrides,
  type Overrides,
  resolveOverrides,
} from '../importer/overrides.js';
import { type ChangeStep, held, type SendStep, type Source } from '../importer/plan.js';
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
  /**
   * The run created it and it still matches: DELETE. Its before-image (journaled with the delete) is
   * the image the import journaled when it created it, read again when the delete is sent.
   */
  | (StepBase & { readonly kind: 'delete-created'; readonly before: ImageSource })
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
      /** Steps in flight at once (the environment's `concurrency`, default 4). */
      readonly concurrency: number;
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

/** A masked image, held or read again from the import journal when it is needed. */
type ImageSource = Source<SafeImage | undefined>;

/** The image of the intent record at `at` (a class, not a closure: see `PreparedSource` in plan.ts). */
class JournaledImage implements ImageSource {
  constructor(
    private readonly reader: JournalRecordReader,
    private readonly at: RecordPlace,
  ) {}

  load(): SafeImage | undefined {
    const record = this.reader.read(this.at);
    return record.kind === 'intent' && record.op !== 'delete' ? record.image : undefined;
  }
}

/** What the import journal says one connection went through. */
interface History {
  readonly name: string;
  type: string;
  readonly firstOp: 'create' | 'update' | 'delete';
  readonly firstBefore: SafeImage | undefined;
  /** The last image the run wrote (create or update); undefined after a delete or in an old journal. */
  lastImage: ImageSource | undefined;
  /** Secrets the run's updates sent in clear (JSON pointers); undefined when none. */
  secretsSent: Set<string> | undefined;
  lastIndex: number;
  applied: boolean;
  pending: boolean;
}

/** Per connection, what the run did, newest first (pure). Other objects' records are counted apart. */
export function readRunHistory(records: readonly JournalRecord[]): {
  histories: History[];
  skipped: Map<string, number>;
} {
  const builder = createRunHistory();
  records.forEach((record, index) => {
    builder.add(record, index);
  });
  return builder.finish();
}

/**
 * {@link readRunHistory} fed one record at a time. With `at` (where the record is in the journal, and
 * `reader` to read it there), a create's or update's image is not kept but read again when needed: an
 * undo of 100 000 creates holds a few numbers per connection.
 */
export function createRunHistory(reader?: JournalRecordReader): {
  add(record: JournalRecord, index: number, at?: RecordPlace): void;
  finish(): { histories: History[]; skipped: Map<string, number> };
} {
  const byName = new Map<string, History>();
  const skipped = new Map<string, number>();
  const add = (record: JournalRecord, index: number, at?: RecordPlace): void => {
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
          secretsSent: undefined,
          lastIndex: index,
          applied: false,
          pending: false,
        };
        byName.set(key, h);
      }
      h.lastIndex = index;
      h.pending = true;
      if (record.op === 'delete') h.lastImage = undefined;
      else {
        h.lastImage =
          at !== undefined && reader !== undefined && record.image !== undefined
            ? new JournaledImage(reader, at)
            : held(record.image);
        if (record.op === 'update' && record.secretsSent.length > 0) {
          h.secretsSent ??= new Set();
          for (const p of record.secretsSent) h.secretsSent.add(p);
        }
      }
      const imageType = record.op === 'delete' ? undefined : record.image?.type;
      if (h.type === '' && typeof imageType === 'string') h.type = imageType;
      return;
    }
    const h = byName.get(key);
    if (h === undefined) return;
    h.pending = false;
    if (record.result !== 'failed') h.applied = true;
    h.lastIndex = index;
  };
  return {
    add,
    finish: () => {
      const histories = [...byName.values()]
        .filter((h) => h.applied || h.pending)
        .sort((a, b) => b.lastIndex - a.lastIndex);
      // Single use: the index by name is not held for the rest of the run.
      byName.clear();
      return { histories, skipped };
    },
  };
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
  // Built on a literal, not spread from a base: see `stepOf` in src/importer/plan.ts.
  const step = <const T extends object>(own: T) => Object.assign({ name: h.name, type: h.type }, own);
  if (h.firstOp === 'create') {
    if (current === undefined) return step({ kind: 'reverted' });
    const image = h.lastImage;
    const created = image?.load();
    if (image === undefined || created === undefined) {
      return step({
        kind: 'left',
        reason: 'the journal holds no image of what was created (older journal)',
      });
    }
    const fields = findChangedFields(created as Connection, current, secretFields);
    if (fields.length > 0) {
      return step({
        kind: 'left',
        reason: `changed since the import created it (${fields.map((f) => f.path).join(', ')})`,
      });
    }
    return step({ kind: 'delete-created', before: image });
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
    if (problems.length > 0) return step({ kind: 'invalid', problems });
    return step({
      kind: 're-create',
      body: restored,
      image: makeSafeImage(restored, secretFields(h.type)),
    });
  }
  const fields = findChangedFields(before as Connection, current, secretFields);
  const secretsToPutBack = context.putBackDone ? [] : [...(h.secretsSent ?? [])];
  if (fields.length === 0 && secretsToPutBack.length === 0) return step({ kind: 'reverted' });
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
  if (problems.length > 0) return step({ kind: 'invalid', problems });
  const body = dropMaskedValues(restored).body;
  return step({
    kind: 'put-back',
    body,
    fields: fields.map((f) => f.path),
    current: makeSafeImage(current, secretFields(h.type)),
    image: makeSafeImage(body, secretFields(h.type)),
    secretsSent: findClearSecrets(body, secretFields(h.type)),
  });
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
  // The import's journal is locked for the whole undo (not for a dry run, which only reads): no import
  // of it runs meanwhile, and it does not change under the images read again from it.
  try {
    await stat(options.journal);
  } catch (error) {
    throw cannotRead(options.journal, (error as NodeJS.ErrnoException).code ?? 'error');
  }
  const release = options.dryRun ? undefined : await lockJournal(options.journal);
  // Read line by line; each create's image stays in the file, read again when its step is planned.
  const reader = openJournalRecordReader(options.journal);
  try {
    return await undoFromJournal(options, ports, onEvent, reader);
  } finally {
    reader.close();
    await release?.();
  }
}

async function undoFromJournal(
  options: UndoOptions,
  ports: UndoPorts,
  onEvent: (event: UndoEvent) => void,
  reader: JournalRecordReader,
): Promise<UndoResult> {
  const history = createRunHistory(reader);
  let index = 0;
  let read: Awaited<ReturnType<typeof replayJournalFile>>;
  try {
    read = await replayJournalFile(options.journal, {
      keepRecord: () => false,
      onRecord: (record, at) => history.add(record, index++, at),
    });
  } catch (error) {
    if (error instanceof InputFileError) throw error;
    throw cannotRead(options.journal, (error as NodeJS.ErrnoException).code ?? 'error');
  }
  if (read === undefined) throw cannotRead(options.journal, 'ENOENT');
  const begin = read.replay.begin;
  if (begin === undefined) {
    throw new InputFileError(options.journal, 1, 'the journal is empty: the import wrote nothing to undo');
  }
  const { histories, skipped } = history.finish();
  for (const [object, count] of skipped) onEvent({ kind: 'skipped-records', object, count });

  const rawOverrides = options.overrides ? await loadOverrides(options.overrides) : EMPTY_OVERRIDES;
  const { overrides } = resolveOverrides(rawOverrides, ports.env);
  // Entries put back are checked against their templates before anything is sent.
  const catalog = await loadShippedCatalog(options.schemas, { forChecks: true });

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

    // Each connection the run touched is planned as the listing hands it out (the listing is not kept);
    // those it does not hand out are gone. Steps run newest first, as the histories are ordered.
    const context = (h: History) => ({
      catalog,
      overrides,
      putBackDone: undoChanges.get(h.name)?.op === 'update' && undoChanges.get(h.name)?.state === 'done',
    });
    const steps = await planAgainstListing(
      // Handed over (the array emptied): once planned, the histories are not held for the run.
      histories.splice(0),
      listConnections(client, { signal: ports.signal }),
      (h, current) => planUndoStep(h, current, context(h)),
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

    const concurrency = environment.concurrency ?? DEFAULT_IMPORT_CONCURRENCY;
    onEvent({
      kind: 'run-started',
      target: environment.label,
      writes: writes.length,
      journal: journalPath,
      concurrency,
    });
    budget.extend(Math.max(30, Math.ceil(writes.length / 10)));
    const { lines, stoppedBy } = await runUndoSteps(
      steps,
      concurrency,
      (step) => runUndoStep(step, { client, journal: active, limiter, budget, ports }),
      (line) => onEvent({ kind: 'step-settled', line }),
    );
    await active.close();
    return { kind: 'ran', target: environment.label, lines, journal: journalPath, stoppedBy };
  } finally {
    await journal?.close();
    client.close();
  }
}

/**
 * Run the writing steps, started newest first, up to `concurrency` at a time (each connection has one
 * step, and no step depends on another's). The first stop (auth, Ctrl-C, a sick service) ends the
 * starting of new ones; steps in flight settle; the rest stay `pending` (re-run to resume). An
 * unexpected failure (a journal write) stops it the same way, then is thrown.
 */
async function runUndoSteps(
  steps: readonly UndoStep[],
  concurrency: number,
  run: (step: UndoStep) => Promise<{ line: UndoLine; stoppedBy: DdsError | undefined }>,
  onSettled: (line: UndoLine) => void = () => undefined,
): Promise<{ lines: UndoLine[]; stoppedBy: DdsError | undefined }> {
  const lines = steps.map(
    (step): UndoLine => ({ step, outcome: isWritingStep(step) ? 'pending' : undefined }),
  );
  let stoppedBy: DdsError | undefined;
  let fatal: { readonly error: unknown } | undefined;
  await forEachLimited(steps, concurrency, async (step, i) => {
    if (!isWritingStep(step) || stoppedBy !== undefined || fatal !== undefined) return;
    try {
      const ran = await run(step);
      stoppedBy ??= ran.stoppedBy;
      lines[i] = ran.line;
      onSettled(ran.line);
    } catch (error) {
      fatal ??= { error };
    }
  });
  if (fatal !== undefined) throw fatal.error;
  return { lines, stoppedBy };
}

/**
 * One step per history, in the histories' order, each planned as the listing hands out its connection
 * (the listing is not kept); a history whose connection is not listed is planned as gone.
 */
async function planAgainstListing(
  histories: readonly History[],
  listing: AsyncIterable<Connection>,
  plan: (h: History, current: Connection | undefined) => UndoStep,
): Promise<UndoStep[]> {
  const order = new Map(histories.map((h, i) => [h.name, i]));
  const planned = new Array<UndoStep | undefined>(histories.length);
  for await (const c of listing) {
    const i = order.get(c.name);
    if (i === undefined || planned[i] !== undefined) continue;
    planned[i] = plan(histories[i] as History, c);
  }
  return histories.map((h, i) => planned[i] ?? plan(h, undefined));
}

function cannotRead(journal: string, code: string): InputFileError {
  return new InputFileError(journal, undefined, `cannot read the journal (${code})`, {
    hint: 'Pass the journal the import wrote (default <snapshot>.<target host>.journal.jsonl)',
  });
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
      source: held({ body: step.body, image: step.image }),
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
      fields: step.fields.map((path) => ({ path })),
      before: held(step.current),
      source: held({ body: step.body, image: step.image, secretsSent: step.secretsSent }),
    };
  } else if (step.kind === 'delete-created') {
    change = {
      kind: 'delete',
      name: step.name,
      type: step.type,
      ...none,
      targetName: step.name,
      before: held(step.before.load() ?? { name: step.name }),
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
