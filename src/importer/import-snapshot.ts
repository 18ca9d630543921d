/**
 * The import workflow. Side effects in this order: overrides, snapshot verified, target resolved, templates,
 * journal locked and replayed with every kind's reads of the target, each kind's plan in `KINDS` order,
 * pre-flight (refused: report written, a fresh journal deleted under the lock), the writes, report and id
 * map. An interrupted run is finished first; then what differs now is the next run (docs/undo.md, "Runs").
 */
import { unlink } from 'node:fs/promises';
import { createRetryBudget } from '../api/retry-policy.js';
import { REFERENCE_POINTERS, type SourceIdChange } from '../connections/references.js';
import { stripServerManaged } from '../connections/server-managed.js';
import { PreflightError, UsageError } from '../errors.js';
import { checkWritableOutputs } from '../files.js';
import type { Connection } from '../model/connection.js';
import { confirmRequired } from '../protected.js';
import { loadShippedCatalog } from '../schema/catalog.js';
import type { JournalObject } from '../sync/journal/records.js';
import { renamedCreates } from '../sync/journal/replay.js';
import {
  defaultJournalPath,
  type Journal,
  normaliseTargetUrl,
  openJournal,
  peekJournal,
} from '../sync/journal/writer.js';
import {
  eachPlan,
  KINDS,
  type KindPlans,
  reportRecordsOf,
  runsOf,
  type SyncKind,
  writersFor,
} from '../sync/kind.js';
import { chooseImportRun } from '../sync/runs.js';
import { outcomeRecord } from '../sync/step.js';
import { createRateLimiter } from '../sync/throttle.js';
import { loadCatalogFromEnvironment } from '../validate/target-catalog.js';
import {
  DEFAULT_IMPORT_CONCURRENCY,
  type ImportEvent,
  type ImportOptions,
  type ImportPorts,
  type ImportResult,
  type OverrideRemoval,
} from './import-types.js';
import type { ImportHandOn, ImportStart, KindImportRun, KindPlanner, PlanHandOn } from './kind-import.js';
import { createPreparer, type LeanSnapshot, readLeanSnapshot } from './lean-snapshot.js';
import { writeReport, writeScrubbedFile } from './outputs.js';
import {
  EMPTY_OVERRIDES,
  findOverrideRemovals,
  findUnusedOverrides,
  loadOverrides,
  type Overrides,
  overridesApplyTo,
  resolveOverrides,
} from './overrides.js';
import { checkPreflight, preflightHint } from './preflight.js';
import { checkOnly } from './selection.js';

/** Import a snapshot into the target. Throws UsageError, PreflightError and the layers' typed errors. */
export async function importSnapshot(
  options: ImportOptions,
  ports: ImportPorts,
  onEvent: (event: ImportEvent) => void,
): Promise<ImportResult> {
  // The overrides first: the one pass over the snapshot checks what they would remove from each entry.
  const rawOverrides = options.overrides ? await loadOverrides(options.overrides) : EMPTY_OVERRIDES;
  const overrides = resolveOverrides(rawOverrides, ports.env);
  const removals: OverrideRemoval[] = [];
  const lean = await readLeanSnapshot(options.snapshot, ports.signal, (entry) => {
    if (!overridesApplyTo(entry, overrides)) return;
    const paths = findOverrideRemovals(stripServerManaged(entry) as Connection, overrides);
    if (paths.length > 0) removals.push({ entry: entry.name, paths });
  });
  try {
    return await importLeanSnapshot(options, ports, onEvent, lean, overrides, removals);
  } finally {
    lean.file.close();
  }
}

/** {@link importSnapshot} once the snapshot is read and verified (its file open for rereads). */
async function importLeanSnapshot(
  options: ImportOptions,
  ports: ImportPorts,
  onEvent: (event: ImportEvent) => void,
  lean: LeanSnapshot,
  overrides: Overrides,
  removals: readonly OverrideRemoval[],
): Promise<ImportResult> {
  for (const rule of findUnusedOverrides(overrides, lean.entries)) onEvent({ kind: 'unused-override', rule });
  if (removals.length > 0) onEvent({ kind: 'override-removes', removals });
  const profileNames = lean.profiles.map((p) => p.scanProfile.name);
  // With --prune, --only may also name connections only the target holds: checked once it is listed.
  if (!options.prune) checkOnly(options.only, lean.entries, profileNames);
  const { selection, include } = lean.verified.header;
  if (options.prune && selection.ids !== null && include.includes('connections')) {
    throw new UsageError(
      "--prune: the snapshot holds connections chosen by id (export --ids), so which of the target's connections lie outside it cannot be told",
      { hint: 'Name what to prune with --only (names or globs), or export without --ids' },
    );
  }

  // One budget and one throttle for every request of the run; the budget is sized once the plan is known.
  const environment = await ports.resolveTarget();
  const limiter = createRateLimiter({
    rate: options.rate ?? environment.rate,
    ...(ports.clock ? { clock: ports.clock } : {}),
  });
  const budget = createRetryBudget(0);
  const client = ports.createClient(environment, {
    retryBudget: budget,
    onRateLimited: (ms) => limiter.onRateLimited(ms),
  });
  let journal: Journal | undefined;
  try {
    const concurrency = options.concurrency ?? environment.concurrency ?? DEFAULT_IMPORT_CONCURRENCY;
    const binding = { snapshotSha256: lean.verified.sha256, targetUrl: normaliseTargetUrl(environment.url) };
    const journalPath = options.journal ?? defaultJournalPath(options.snapshot, environment.url);
    // An output that cannot be written is found now, not after the last POST.
    await checkWritableOutputs(
      [
        { path: journalPath, flag: '--journal' },
        { path: options.report, flag: '--report' },
        { path: options.idMap, flag: '--id-map' },
      ],
      [options.snapshot],
    );

    // The budget covers the reads' retries too.
    budget.extend(20);
    const catalog = options.templatesFromTarget
      ? await loadCatalogFromEnvironment(client, [...new Set(lean.entries.map((e) => e.type))])
      : await loadShippedCatalog(options.schemas);

    const sourceIdChanges = new Map<string, readonly SourceIdChange[]>();
    // Ended when the journal cannot be opened (another run holds it, it is bound elsewhere).
    const readsStop = new AbortController();
    const start: ImportStart = {
      options,
      lean,
      client,
      signal: AbortSignal.any([ports.signal, readsStop.signal]),
      prepare: createPreparer(lean.file, overrides, catalog, sourceIdChanges),
      catalog,
      overrides,
      sourceIdChanges,
      onEvent,
    };
    // Once, when the lock is held (or after a dry run's peek): every kind's reads go out together.
    let planners: (readonly [SyncKind, KindPlanner<unknown>])[] | undefined;
    const startReads = () => {
      planners ??= KINDS.map((kind) => [kind, kind.startImport(start)] as const);
      return planners;
    };

    if (!options.dryRun) {
      // Listed once the journal is locked: a run that held it before has ended, and its writes show.
      journal = await openJournal(journalPath, binding, {
        onLocked: () => startReads(),
      }).catch((error: unknown) => {
        readsStop.abort();
        throw error;
      });
    }
    const replay = journal === undefined ? await peekJournal(journalPath, binding) : journal.replay;
    const { run, continuing } = chooseImportRun(replay, journalPath);
    // Read only under a rename: a pass over every write of every run (100 000 after a large import).
    const renames = options.onConflict === 'rename' || options.profileOnConflict === 'rename';
    const renamed = new Map(
      KINDS.map((kind) => [
        kind.object,
        renames ? renamedCreates(replay?.runs ?? [], kind.object) : new Map(),
      ]),
    );
    journal?.releaseReplay();
    const ready = [];
    for (const [kind, planner] of startReads())
      ready.push([kind, await planner(continuing, renamed.get(kind.object) ?? new Map())] as const);
    const handed = new Map<JournalObject, PlanHandOn>();
    const planned: Partial<Record<keyof KindPlans, unknown>> = {};
    for (const [kind, planKind] of ready) {
      const { plan, handOn } = planKind(handed);
      planned[kind.planKey] = plan;
      if (handOn !== undefined) handed.set(kind.object, handOn);
    }
    const plans = planned as KindPlans;
    const kinds = eachPlan(plans);
    const sum = (of: (kind: SyncKind, plan: unknown) => number | undefined) =>
      kinds.reduce((n, [k, p]) => n + (of(k, p) ?? 0), 0);
    // What the run's messages and budget count (a kind without `share` announces its own start).
    const shared = (key: 'done' | 'inDoubt' | 'sends' | 'total') => sum((k, p) => k.share?.(p)[key]);
    const problems = checkPreflight(kinds, {
      maxChanges: options.maxChanges,
      target: environment,
      confirm: options.confirm,
      snapshotSourceUrl: lean.verified.header.source?.url,
      allowSameSource: options.allowSameSource,
      dryRun: options.dryRun,
    });

    if (options.dryRun) {
      // The rule the real run's pre-flight applies: every kind's changes together.
      const required =
        sum((k, p) => k.changes(p)) > 0 ? confirmRequired(environment, options.confirm) : undefined;
      return {
        kind: 'dry-run',
        target: environment.label,
        entryCount: lean.entries.length,
        ...plans,
        problems,
        confirmRequired: required,
      };
    }

    if (journal === undefined) throw new Error('journal not open');
    if (problems.length > 0) {
      if (options.report) await writeReport(options.report, reportRecordsOf(runsOf(plans), undefined));
      if (journal.fresh) {
        // Under the lock: the next holder's new journal must not be deleted under it.
        await unlink(journal.path).catch(() => undefined);
        await journal.close();
      }
      throw new PreflightError(
        `Pre-flight refused the import into ${environment.label}; nothing was sent`,
        problems,
        {
          hint: preflightHint(problems, REFERENCE_POINTERS, options.snapshot),
        },
      );
    }

    if (continuing !== undefined && shared('done') + shared('inDoubt') > 0) {
      onEvent({
        kind: 'resuming',
        run,
        done: shared('done'),
        inDoubt: shared('inDoubt'),
        total: shared('total'),
      });
    }
    if (continuing !== undefined) {
      for (const [kind, plan] of kinds)
        for (const settled of kind.settled?.(plan) ?? [])
          await journal.append(outcomeRecord(settled, run, new Date().toISOString()));
    }
    const writes = sum((k, p) => (k.writes ?? k.changes)(p));
    let outcomes: Awaited<ReturnType<typeof runKinds>> = { outcomes: {}, stoppedBy: undefined, plans };
    if (writes > 0) {
      if (continuing === undefined) await journal.startRun(run, 'import');
      // A sick service ends the run: about one retry per ten writes, at least 30.
      budget.extend(Math.max(30, Math.ceil(shared('sends') / 10)));
      onEvent({
        kind: 'run-started',
        run,
        target: environment.label,
        sends: shared('sends'),
        total: shared('total'),
        concurrency,
        rate: limiter.currentRate(),
        journal: journalPath,
      });
      try {
        outcomes = await runKinds(
          plans,
          {
            onConflict: options.onConflict,
            client,
            deps: {
              writers: writersFor(client),
              journal,
              run,
              limiter,
              budget,
              log: ports.log,
              signal: ports.signal,
              ...(ports.clock ? { clock: ports.clock } : {}),
            },
            budget,
            concurrency,
            onOutcome: (outcome) => onEvent({ kind: 'write-settled', outcome }),
          },
          (label, sends) => onEvent({ kind: 'kind-started', label, target: environment.label, sends }),
        );
      } finally {
        onEvent({ kind: 'run-ended' });
      }
    }
    const stoppedBy = outcomes.stoppedBy;
    const wrote = writes > 0 || continuing !== undefined;
    if (stoppedBy === undefined && wrote) await journal.endRun(run);
    await journal.close();

    const runs = runsOf(outcomes.plans, outcomes.outcomes);
    const reportRun = wrote ? run : undefined;
    if (options.report) {
      await writeReport(options.report, reportRecordsOf(runs, reportRun));
      onEvent({ kind: 'file-written', file: 'report', path: options.report });
    }
    if (options.idMap) {
      await writeScrubbedFile(
        options.idMap,
        `${JSON.stringify(Object.assign({}, ...KINDS.map((k) => k.idMap?.(runs))), null, 2)}\n`,
      );
      onEvent({ kind: 'file-written', file: 'id-map', path: options.idMap });
    }
    return {
      ...runs,
      kind: 'ran',
      target: environment.label,
      rateLimited: limiter.rateLimitedCount,
      journal: journalPath,
      run: reportRun,
      reportPath: options.report,
      idMapPath: options.idMap,
      stoppedBy,
    };
  } finally {
    await journal?.close();
    client.close();
  }
}

/** Every kind's writes, kind after kind; the first kind that stops ends the run. `plans`: as run. */
async function runKinds(
  plans: KindPlans,
  run: Omit<KindImportRun, 'onStarted'>,
  onKindStarted: (label: string, sends: number) => void,
) {
  const outcomes: Partial<Record<JournalObject, ReadonlyMap<unknown, unknown>>> = {};
  const handed = new Map<JournalObject, ImportHandOn>();
  let ran = plans;
  for (const [kind, plan] of eachPlan(plans)) {
    const onStarted = (sends: number) => onKindStarted(kind.label, sends);
    const result = await kind.runImport(plan, { ...run, onStarted }, handed);
    outcomes[kind.object] = result.outcomes;
    ran = { ...ran, [kind.planKey]: result.plan };
    if (result.handOn !== undefined) handed.set(kind.object, result.handOn);
    if (result.stoppedBy !== undefined) return { outcomes, stoppedBy: result.stoppedBy, plans: ran };
  }
  return { outcomes, stoppedBy: undefined, plans: ran };
}
