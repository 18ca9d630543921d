/**
 * The import workflow: makes a target match a snapshot. The steps, in this order of side effects:
 * overrides read -> snapshot verified (one pass, keeping per entry only its name, type, source id and
 * place in the file) -> target resolved -> throttle and client created -> templates loaded -> journal
 * locked and replayed, then every kind's reads of the target (`startImport` of its descriptor:
 * connections with scanner groups and credentials, scan profiles when the snapshot includes them; a dry
 * run only peeks at the journal) -> each kind's plan against the live target, kind after kind in the
 * order of `KINDS`, each given what the kinds before it hand on (each kind's `import.ts`) -> pre-flight -> (dry
 * run: return the plans) -> (refused: report written, fresh journal deleted under the lock,
 * PreflightError) -> the run's writes through the executor (`run-import.ts`) -> report, id map.
 *
 * Runs: the journal holds the runs of one snapshot into one target. An interrupted run is finished:
 * what it left in doubt is looked up by name before anything is sent again, what it did is reported as
 * done. A finished run hides nothing: the plan is made afresh against the live target, and whatever
 * differs now is the next run. When nothing differs nothing is written (no run is recorded).
 *
 * It prints nothing: progress and warnings are {@link ImportEvent}s, the outcome an {@link ImportResult};
 * `cli/import.ts` renders both. Its ports (resolving the target, the client factory, the clock) are
 * arguments, so tests can hand fakes.
 */
import { unlink } from 'node:fs/promises';
import { createRetryBudget } from '../api/retry-policy.js';
import { REFERENCE_POINTERS, type SourceIdChange } from '../connections/references.js';
import { stripServerManaged } from '../connections/server-managed.js';
import { PreflightError } from '../errors.js';
import { checkWritableOutputs } from '../files.js';
import type { Connection } from '../model/connection.js';
import { checkWriteConfirmed } from '../protected.js';
import { loadShippedCatalog } from '../schema/catalog.js';
import type { JournalObject } from '../sync/journal/records.js';
import {
  defaultJournalPath,
  type Journal,
  normaliseTargetUrl,
  openJournal,
  peekJournal,
} from '../sync/journal/writer.js';
import { eachPlan, KINDS, type KindPlans, reportRecordsOf, runsOf, type SyncKind } from '../sync/kind.js';
import { chooseImportRun } from '../sync/runs.js';
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
import type { ImportStart, KindPlanner, PlanHandOn } from './kind-import.js';
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
import { runImportSteps } from './run-import.js';
import { checkOnly } from './selection.js';

/**
 * Import a snapshot into the target (see the module comment for the order of side effects).
 * Throws UsageError, PreflightError (its problems the refusal's) and the typed errors of the layers below.
 */
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
    // Most entries have no override at all (none without --overrides): nothing to look for.
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

/** {@link importSnapshot} once the snapshot is read and verified (its file stays open for rereads). */
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
    await checkWritableOutputs([
      { path: journalPath, flag: '--journal' },
      { path: options.report, flag: '--report' },
      { path: options.idMap, flag: '--id-map' },
    ]);

    // Listing and template look-ups are reads; the budget covers their retries too.
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
    // Once: when the lock is held (below), or after a dry run's peek. Every kind's reads go out
    // together (each waits on the service, not on this process), while the journal is replayed; a
    // failure of one ends the run, and the others' ends are ignored.
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
    // A dry run only peeks. Every earlier run's states are let go once chosen: the run continued (if
    // any) is all the import needs.
    const { run, continuing } = chooseImportRun(
      journal === undefined ? await peekJournal(journalPath, binding) : journal.replay,
      journalPath,
    );
    journal?.releaseReplay();
    // Kind after kind: each plans with what the kinds before it hand on (a later kind's references).
    const ready = [];
    for (const [kind, planner] of startReads()) ready.push([kind, await planner(continuing)] as const);
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
    // What the run's messages and budget count: the kinds that share them (others announce their own start).
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
      const needsConfirm =
        sum((k, p) => k.changes(p)) > 0 &&
        environment.protected &&
        checkWriteConfirmed(environment, options.confirm, '--to') !== undefined;
      return {
        kind: 'dry-run',
        target: environment.label,
        entryCount: lean.entries.length,
        ...plans,
        problems,
        confirmRequired: needsConfirm ? (environment.name ?? environment.label) : undefined,
      };
    }

    if (journal === undefined) throw new Error('journal not open');
    if (problems.length > 0) {
      if (options.report) await writeReport(options.report, reportRecordsOf(runsOf(plans), undefined));
      if (journal.fresh) {
        // Deleted while this run still holds the lock: a run that takes the lock next must not have
        // its new journal deleted under it.
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
    const writes = sum((k, p) => (k.writes ?? k.changes)(p));
    let outcomes: Awaited<ReturnType<typeof runImportSteps>> = { outcomes: {}, stoppedBy: undefined, plans };
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
        outcomes = await runImportSteps({
          plans,
          onConflict: options.onConflict,
          client,
          deps: {
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
          onKindStarted: (label, sends) =>
            onEvent({ kind: 'kind-started', label, target: environment.label, sends }),
        });
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
