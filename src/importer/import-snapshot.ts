/**
 * The import workflow: creates a snapshot's connections in a target, one POST at a time, throttled,
 * retrying only where it is safe, journaled so that re-running resumes and no connection is ever
 * created twice. The steps, in this order of side effects: overrides read -> snapshot verified (one
 * pass, keeping per entry only its name, type, source id and place in the file) -> target resolved ->
 * throttle and client created -> templates loaded -> journal locked, then the target listed
 * (connections, scan profiles when the snapshot includes them, scanner groups and credentials) while
 * the journal is replayed (a dry run only peeks at the journal, then lists) -> the template schemas of
 * the entries still to create compiled while those reads are out ->
 * plan (connections, then profiles: `profiles-phase.ts`) -> pre-flight -> (dry run: return the plans) ->
 * (refused: report written, fresh journal deleted under the lock, PreflightError) -> run (creates; then,
 * with `--on-conflict update` / `--prune`, updates and deletes: converge-run.ts) -> profile phase
 * (target's connections listed again for their ids) -> report, id map.
 *
 * Memory: an entry's body is prepared (read again from the snapshot, checked by CRC-32) when the plan
 * checks it and when it is sent, and dropped after; the journal is replayed line by line, keeping only
 * its scan profile records. What grows with the snapshot is a few hundred bytes per entry.
 *
 * It prints nothing: progress and warnings are {@link ImportEvent}s, the outcome an {@link ImportResult};
 * `cli/import.ts` renders both. Its ports (resolving the target, the client factory, the clock) are
 * arguments, so tests can hand fakes.
 */
import { unlink } from 'node:fs/promises';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ClientFactory, EnvironmentResolver } from '../api/client-factory.js';
import {
  createConnection,
  deleteConnection,
  getConnectionByName,
  listConnectionPages,
  updateConnection,
} from '../api/connections.js';
import { createRetryBudget, type HttpClient } from '../api/http.js';
import { listScanProfiles } from '../api/scan-profiles.js';
import {
  checkEntryReferences,
  createReferenceCollector,
  REFERENCE_POINTERS,
  REMAP_NOTHING,
  type ReferencingEntry,
  type RemapSourceId,
  type SourceIdChange,
  type TargetReferences,
} from '../connections/references.js';
import { stripServerManaged } from '../connections/server-managed.js';
import { type DdsError, PreflightError, type Problem, UsageError } from '../errors.js';
import { checkWritableOutputs } from '../files.js';
import type { Logger } from '../log.js';
import type { Connection } from '../model/connection.js';
import { checkWriteConfirmed } from '../protected.js';
import { loadShippedCatalog } from '../schema/catalog.js';
import { loadCatalogFromEnvironment } from '../validate/target-catalog.js';
import { fetchTargetReferences } from '../validate/target-references.js';
import { TOOL_NAME, TOOL_VERSION } from '../version.js';
import { createConvergeHelpers } from './converge.js';
import { type ChangeOutcome, runChanges } from './converge-run.js';
import { checkPreparedEntry, checkWhileWaiting } from './early-checks.js';
import { DROP_IMAGES, type ImageStore, removeLeftImages, spillImages } from './image-spill.js';
import {
  defaultJournalPath,
  type Journal,
  type JournalChangeState,
  type JournalEntryState,
  type JournalRecord,
  normaliseTargetUrl,
  openJournal,
  peekJournal,
} from './journal.js';
import { createPreparer, type LeanSnapshot, readLeanSnapshot } from './lean-snapshot.js';
import {
  buildIdMap,
  buildReport,
  countOutcomes,
  type ReportLine,
  serializeReport,
  writeScrubbedFile,
} from './outputs.js';
import {
  EMPTY_OVERRIDES,
  findOverrideRemovals,
  findUnusedOverrides,
  loadOverrides,
  type Overrides,
  overridesApplyTo,
  resolveOverrides,
} from './overrides.js';
import {
  type ConvergeHelpers,
  type ImportPlan,
  isChangeStep,
  isSendStep,
  type OnConflict,
  type PlanEntry,
  type PreparedEntry,
  planImport,
  summarizeTarget,
  type TargetConnection,
  type TargetSummaryRules,
} from './plan.js';
import { checkPreflight, type EntryTemplates, formatProblem } from './preflight.js';
import {
  buildProfileReport,
  countProfileOutcomes,
  countProfileSends,
  type ProfileJournalState,
  type ProfileOnConflict,
  type ProfilePlan,
  type ProfileReportLine,
  planProfiles,
  replayProfileRecords,
  runProfilePhase,
} from './profiles-phase.js';
import { describeImportReferenceWarnings } from './references.js';
import { type EntryOutcome, runImport } from './run.js';
import { type Clock, createRateLimiter } from './throttle.js';

/** Default concurrency when neither the options nor the environment's config set one. */
export const DEFAULT_IMPORT_CONCURRENCY = 4;

/** The import's options, checked once (by `cli/import.ts`); paths are absolute. */
export interface ImportOptions {
  readonly snapshot: string;
  readonly concurrency: number | undefined;
  readonly rate: number | undefined;
  readonly onConflict: OnConflict;
  /** Delete target connections (and, when the snapshot includes them, scan profiles) the snapshot does not hold (within `only`). */
  readonly prune?: boolean;
  readonly overrides: string | undefined;
  readonly only: ReadonlySet<string> | undefined;
  readonly maxChanges: number | undefined;
  readonly dryRun: boolean;
  readonly journal: string | undefined;
  readonly idMap: string | undefined;
  readonly report: string | undefined;
  readonly confirm: string | undefined;
  readonly allowSameSource: boolean;
  readonly schemas: string | undefined;
  readonly templatesFromTarget: boolean;
  /** `--allow-run`: one-time scan profiles are created (each starts a scan); default skipped. */
  readonly allowRun?: boolean;
  /** How an existing scan profile is handled; default `onConflict` (`update` compares and PUTs). */
  readonly profileOnConflict?: ProfileOnConflict;
}

/** The outside world of {@link importSnapshot}. */
export interface ImportPorts {
  /** Resolves the target environment (config, token); called once the snapshot and overrides are read. */
  readonly resolveTarget: EnvironmentResolver;
  readonly createClient: ClientFactory;
  /** The variables `${env:NAME}` in the overrides reads. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly log: Logger;
  /** Ctrl-C: stop starting requests. */
  readonly signal: AbortSignal;
  /** The throttle's and the runner's clock; default the system clock. */
  readonly clock?: Clock;
  /**
   * Target ids of objects restored in the same run, by source id (`defaultScanProfileId`, ...); default:
   * none, so every source-environment id is dropped with a warning.
   */
  readonly remapSourceId?: RemapSourceId;
}

/** Progress and warnings of an import, in the order they happen. */
export type ImportEvent =
  /** An overrides rule that matches no entry of the snapshot (e.g. `byName.x`). */
  | { readonly kind: 'unused-override'; readonly rule: string }
  /** The overrides would remove these parts of an entry (JSON pointers): never silently. */
  | { readonly kind: 'override-removes'; readonly entry: string; readonly paths: readonly string[] }
  /**
   * Template warnings found while planning, deduplicated: each formatted for one line (`messages`) and
   * as the problem it came from (`warnings`, same order), so a renderer can group them by message.
   */
  | {
      readonly kind: 'template-warnings';
      readonly messages: readonly string[];
      readonly warnings: readonly Problem[];
    }
  /** References not checkable in the target, source-environment ids dropped: one line per kind. */
  | { readonly kind: 'reference-warnings'; readonly messages: readonly string[] }
  /** The pre-flight refused a real run; the report (if asked for) is written, the journal not yet deleted. */
  | { readonly kind: 'refused'; readonly problems: readonly Problem[] }
  /**
   * The journal holds an earlier run of this import: `done` entries were created by it, `inDoubt` were
   * sent with no recorded outcome (they are looked up by name before anything is sent again).
   */
  | { readonly kind: 'resuming'; readonly done: number; readonly inDoubt: number; readonly total: number }
  /** The sends begin. */
  | {
      readonly kind: 'run-started';
      readonly target: string;
      readonly sends: number;
      readonly total: number;
      readonly concurrency: number;
      readonly rate: number | undefined;
      readonly journal: string;
    }
  /** One entry settled (created or failed). */
  | { readonly kind: 'entry-settled'; readonly outcome: EntryOutcome }
  /** One update or delete settled (applied or failed). */
  | { readonly kind: 'change-settled'; readonly outcome: ChangeOutcome }
  /** The sends ended, also when the run throws. */
  | { readonly kind: 'run-ended' }
  /** The scan profile phase begins (after the connections). */
  | { readonly kind: 'profiles-started'; readonly target: string; readonly sends: number }
  /** An output file was written. */
  | { readonly kind: 'file-written'; readonly file: 'report' | 'id-map'; readonly path: string };

/** What an import did. */
export type ImportResult =
  | {
      readonly kind: 'dry-run';
      readonly target: string;
      readonly entryCount: number;
      readonly plan: ImportPlan;
      /** The scan profile phase's plan (empty when the snapshot holds no profiles). */
      readonly profilePlan: ProfilePlan;
      /** The pre-flight's problems; non-empty means a real run would be refused. */
      readonly problems: readonly Problem[];
      /**
       * The target is protected and the real run will need `--confirm <this name>` (undefined when it
       * needs none, or was given the right one). The dry run itself writes nothing, so it is not refused.
       */
      readonly confirmRequired: string | undefined;
    }
  | {
      readonly kind: 'ran';
      readonly target: string;
      readonly report: readonly ReportLine[];
      readonly counts: ReturnType<typeof countOutcomes>;
      /** One line per scan profile (the snapshot's, and the target's pruned ones). */
      readonly profileReport: readonly ProfileReportLine[];
      readonly profileCounts: ReturnType<typeof countProfileOutcomes>;
      /** False when the snapshot says nothing about scan profiles (version 1, or exported without them). */
      readonly profilesIncluded: boolean;
      readonly rateLimited: number;
      readonly journal: string;
      readonly reportPath: string | undefined;
      readonly idMapPath: string | undefined;
      /** Why the run stopped early (auth, Ctrl-C, a sick service); the caller throws it after rendering. */
      readonly stoppedBy: DdsError | undefined;
    };

/**
 * An update's body names references too: the pre-flight checks them as it does for creates. A refused
 * update's references count among the run's (`onRefused`), as a refused create's do.
 */
function withReferenceChecks(
  helpers: ConvergeHelpers,
  target: TargetReferences,
  onRefused: (entry: PreparedEntry) => void,
): ConvergeHelpers {
  return {
    ...helpers,
    checkUpdate: (entry) => {
      const problems = [...helpers.checkUpdate(entry), ...checkEntryReferences(entry, target)];
      if (problems.length > 0) onRefused(entry);
      return problems;
    },
  };
}

/**
 * The target's connections: names and ids, or, when updates or deletes need more (`summarize`), what
 * {@link summarizeTarget} keeps of each as its page arrives (never the whole listing at once).
 */
async function listTarget(
  client: HttpClient,
  signal: AbortSignal,
  summarize?: (connection: Connection) => TargetConnection,
): Promise<TargetConnection[]> {
  const out: TargetConnection[] = [];
  for await (const page of listConnectionPages(client, { signal }))
    for (const c of page)
      out.push(
        summarize !== undefined
          ? summarize(c)
          : { name: c.name, _id: typeof c._id === 'string' ? c._id : undefined },
      );
  return out;
}

/** {@link summarizeTarget} for this run: its snapshot entries by name, prepared when compared. */
function targetSummarizer(
  entries: readonly PlanEntry[],
  prepare: (entry: PlanEntry) => PreparedEntry,
  options: Pick<ImportOptions, 'onConflict' | 'prune' | 'only'>,
  converge: ConvergeHelpers,
  images: ImageStore,
): (connection: Connection) => TargetConnection {
  const byName = new Map<string, PlanEntry>();
  // The first of a name, as the plan pairs them (a snapshot's reader refuses a second one anyway).
  for (const entry of entries) if (!byName.has(entry.name)) byName.set(entry.name, entry);
  const rules: TargetSummaryRules = {
    update: options.onConflict === 'update',
    prune: options.prune === true,
    only: options.only,
    twin: (name) => {
      const entry = byName.get(name);
      return entry === undefined ? undefined : () => prepare(entry);
    },
    converge,
    keepImage: (image) => images.keep(image),
  };
  return (connection) => summarizeTarget(connection, rules);
}

/**
 * The next step for a refused pre-flight: the overrides advice only when a field of an entry is at
 * fault (masked, empty or missing values are what --overrides supplies), not for run-wide refusals
 * such as a protected target or --max-changes; with secrets to supply, it ends on the command that
 * writes an overrides file for them.
 */
function preflightHint(problems: readonly Problem[], snapshot: string): string {
  const references = problems.some((p) => p.path !== undefined && REFERENCE_POINTERS.has(p.path));
  // Secrets to supply: end on the command that writes an overrides file for every one of them.
  const secrets = problems.filter((p) => p.code !== undefined).length;
  if (secrets > 0) {
    const quoted = /^[\w@%+=:,./-]+$/.test(snapshot) ? snapshot : `'${snapshot.replaceAll("'", "'\\''")}'`;
    return `${
      references
        ? 'Create the missing scanner groups or stored credentials in the target (or set others with --overrides); '
        : ''
    }${secrets === 1 ? 'one is a secret' : `${secrets} are secrets`} to supply with --overrides; a file of variables for every one: dds-migrate overrides init ${quoted} -o overrides.json`;
  }
  if (references) {
    return 'Create the missing scanner groups or stored credentials in the target, or set others with --overrides (e.g. {"all": {"scanner_group": "..."}}), and re-run (--dry-run shows the plan)';
  }
  const fieldProblems = problems.some((p) => p.path !== undefined);
  return fieldProblems
    ? // biome-ignore lint/suspicious/noTemplateCurlyInString: "${env:VAR}" is a literal overrides placeholder
      'Fix the problems listed above and re-run (masked, empty or missing values: supply them with --overrides, e.g. "${env:VAR}"; --dry-run shows the plan)'
    : 'Fix the problems listed above and re-run (--dry-run shows the plan)';
}

/** Check `--only` against the snapshot's names (connections and scan profiles; with `--prune`, the target's too). */
function checkOnly(
  only: ReadonlySet<string> | undefined,
  entries: readonly { readonly name: string }[],
  profileNames: readonly string[] = [],
): void {
  if (!only) return;
  const names = new Set([...entries.map((e) => e.name), ...profileNames]);
  const unknown = [...only].filter((n) => !names.has(n));
  if (unknown.length > 0) {
    throw new UsageError(`--only names connections that are not in the snapshot: ${unknown.join(', ')}`, {
      hint: 'Check the names (they are case-sensitive)',
    });
  }
}

/** The journal records the import keeps in memory: the profile phase's (connection states are folded). */
function isProfileRecord(record: JournalRecord): boolean {
  return record.kind === 'profile-intent' || record.kind === 'profile-outcome';
}

/** `--report` lines of the scan profiles. */
function serializeProfileReport(report: readonly ProfileReportLine[]): string {
  return report.map((l) => `${JSON.stringify(l)}\n`).join('');
}

/**
 * The profile phase's share of the pre-flight: its own problems, `--max-changes` over connections and
 * profiles together, and the protected-target rule when only profiles would be written.
 */
function checkProfilePreflight(
  profilePlan: ProfilePlan,
  connectionSends: number,
  options: ImportOptions,
  environment: { label: string; name: string | undefined; url: string; protected: boolean },
): Problem[] {
  const problems: Problem[] = [...profilePlan.problems];
  const profileSends = countProfileSends(profilePlan);
  if (
    options.maxChanges !== undefined &&
    connectionSends <= options.maxChanges &&
    connectionSends + profileSends > options.maxChanges
  ) {
    problems.push({
      message: `${connectionSends} connection and ${profileSends} scan profile changes, more than --max-changes ${options.maxChanges}; raise --max-changes or narrow with --only`,
    });
  }
  if (!options.dryRun && connectionSends === 0 && profileSends > 0) {
    const refusal = checkWriteConfirmed(environment, options.confirm, '--to');
    if (refusal) problems.push({ message: `${refusal.reason}; ${refusal.hint}` });
  }
  return problems;
}

/**
 * Import a snapshot into the target (see the module comment for the order of side effects).
 * Throws UsageError, PreflightError (after a `refused` event) and the typed errors of the layers below.
 */
export async function importSnapshot(
  options: ImportOptions,
  ports: ImportPorts,
  onEvent: (event: ImportEvent) => void,
): Promise<ImportResult> {
  // The overrides first: the one pass over the snapshot checks what they would remove from each entry.
  const rawOverrides = options.overrides ? await loadOverrides(options.overrides) : EMPTY_OVERRIDES;
  const { overrides } = resolveOverrides(rawOverrides, ports.env);
  const removals: { entry: string; paths: string[] }[] = [];
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
  removals: readonly { entry: string; paths: string[] }[],
): Promise<ImportResult> {
  for (const rule of findUnusedOverrides(overrides, lean.entries)) onEvent({ kind: 'unused-override', rule });
  for (const { entry, paths } of removals) onEvent({ kind: 'override-removes', entry, paths });
  const profilesIncluded = lean.verified.header.include.includes('scanProfiles');
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
      : await loadShippedCatalog(options.schemas, { forChecks: true });

    // Listed once the journal is locked: a run that held it before has ended, and its creates show.
    // The three reads go out together (each waits on the service, not on this process), while the
    // journal is replayed; a failure of one ends the run, and the others' ends are ignored.
    const converging = options.onConflict === 'update' || options.prune === true;
    const sourceIdChanges = new Map<string, readonly SourceIdChange[]>();
    const prepare = createPreparer(
      lean.file,
      overrides,
      catalog,
      ports.remapSourceId ?? REMAP_NOTHING,
      sourceIdChanges,
    );
    const templates: EntryTemplates = {
      checkEntry: (entry) => catalog.checkEntry(entry as Connection),
      requiredSecretFields: (type) => catalog.requiredSecretFields(type),
    };
    const convergeHelpers = createConvergeHelpers({
      ...templates,
      secretFields: (t) => catalog.secretFields(t),
    });
    // Converging, each listed connection is compared with its snapshot entry as its page arrives, and
    // only the outcome kept (and its image when it may be updated or deleted): the listing held whole
    // was what grew with the target (100 000 connections: 402 MB peak, 1 000 of them updated).
    // The before-images of what will be updated or deleted wait in a file beside the journal (a dry
    // run sends nothing and keeps none): `image-spill.ts`.
    // Removed just before the journal's lock is released (`beforeRelease` below), whatever ends the run.
    const images = options.dryRun ? DROP_IMAGES : spillImages(journalPath);
    const summarize = converging
      ? targetSummarizer(lean.entries, prepare, options, convergeHelpers, images)
      : undefined;
    // Ended when the journal cannot be opened (another run holds it, it is bound elsewhere): the run
    // ends at once, its reads with it.
    const readsStop = new AbortController();
    const readSignal = AbortSignal.any([ports.signal, readsStop.signal]);
    let reads: ReturnType<typeof sendReads> | undefined;
    // Once: when the lock is held (below), or after a dry run's peek.
    const startReads = () => {
      reads ??= sendReads();
      return reads;
    };
    const sendReads = () => {
      const listing = listTarget(client, readSignal, summarize);
      const profileListing: ReturnType<typeof listScanProfiles> = profilesIncluded
        ? listScanProfiles(client, { signal: readSignal })
        : Promise.resolve([]);
      // Scanner groups and stored credentials the target holds (a 404 leaves that kind unchecked).
      const referencesRead = fetchTargetReferences(client, readSignal);
      for (const read of [listing, profileListing, referencesRead]) read.catch(() => undefined);
      return { listing, profileListing, referencesRead };
    };

    let journalState: ReadonlyMap<string, JournalEntryState> = new Map();
    let journalChanges: ReadonlyMap<string, JournalChangeState> = new Map();
    let profileJournal: ReadonlyMap<string, ProfileJournalState> = new Map();
    if (options.dryRun) {
      const peeked = await peekJournal(journalPath, binding, { keepRecord: isProfileRecord });
      journalState = peeked?.entries ?? new Map();
      journalChanges = peeked?.changes ?? new Map();
      profileJournal = replayProfileRecords(peeked?.records ?? []);
    } else {
      journal = await openJournal(journalPath, binding, {
        tool: `${TOOL_NAME} ${TOOL_VERSION}`,
        keepRecord: isProfileRecord,
        onLocked: () => {
          // Under the lock no other run of this journal is using one: what killed runs left goes.
          if (converging) removeLeftImages(journalPath);
          startReads();
        },
        beforeRelease: () => images.close(),
      }).catch((error: unknown) => {
        readsStop.abort();
        throw error;
      });
      journalState = journal.replay.entries;
      journalChanges = journal.replay.changes;
      profileJournal = replayProfileRecords(journal.replay.records);
    }
    const { listing, profileListing, referencesRead } = startReads();
    // The template schemas of the entries still to create are compiled while the reads are out (tens
    // of ms that would come after), once the requests are on the wire (callbacks queued behind this
    // one send them). A finished run's re-run compiles none.
    await nextTurn();
    // An entry an earlier run created is not checked again (the plan marks it done).
    const stillToSend = (entry: PlanEntry) => journalState.get(entry.name)?.state !== 'done';
    const typesToCheck = new Set<string>();
    for (const entry of lean.entries) if (stillToSend(entry)) typesToCheck.add(entry.type);
    catalog.compile(typesToCheck);
    // The entries still to send are checked while the target is listed, until the listing arrives
    // (`early-checks.ts`); the plan takes what was found and checks the rest itself.
    const early = await checkWhileWaiting(
      lean.entries,
      (entry) => stillToSend(entry) && (options.only?.has(entry.name) ?? true),
      listing,
      (entry) => checkPreparedEntry(prepare(entry), templates),
    );
    const target = await listing;
    if (options.prune) checkOnly(options.only, [...lean.entries, ...target], profileNames);
    const targetProfiles = await profileListing;
    const targetReferences = await referencesRead;

    const warnings = new Map<string, Problem>();
    // The references of the entries the run would send (or refuses), collected as they are checked.
    const references = createReferenceCollector();
    const referencing = new Set<string>();
    const noteReferences = (entry: ReferencingEntry): void => {
      references.add(entry);
      referencing.add(entry.name);
    };
    const plan = planImport({
      entries: lean.entries,
      prepare,
      target,
      journal: journalState,
      onConflict: options.onConflict,
      only: options.only,
      prune: options.prune === true,
      changes: journalChanges,
      ...(converging
        ? {
            converge: withReferenceChecks(convergeHelpers, targetReferences, noteReferences),
          }
        : {}),
      check: (entry, prepared) => {
        const checked = early.get(entry.name) ?? checkPreparedEntry(prepared(), templates);
        noteReferences(checked.referencing);
        for (const w of checked.warnings) {
          const line = w.type && !w.path ? `${w.type}: ${w.message}` : formatProblem(w);
          if (!warnings.has(line)) warnings.set(line, w);
        }
        return [...checked.problems, ...checkEntryReferences(checked.referencing, targetReferences)];
      },
    });
    if (warnings.size > 0)
      onEvent({
        kind: 'template-warnings',
        messages: [...warnings.keys()],
        warnings: [...warnings.values()],
      });
    const referenceWarnings = describeImportReferenceWarnings(
      references.needs(),
      referencing,
      targetReferences,
      sourceIdChanges,
    );
    if (referenceWarnings.length > 0) onEvent({ kind: 'reference-warnings', messages: referenceWarnings });

    const createdConnections = new Map<string, string>();
    for (const step of plan.steps) {
      if (
        step.kind === 'create' ||
        step.kind === 'rename' ||
        step.kind === 'reconcile' ||
        step.kind === 'done'
      )
        createdConnections.set(step.name, step.targetName);
    }
    const profilePlan = planProfiles({
      profiles: lean.profiles,
      included: profilesIncluded,
      targetProfiles,
      targetConnections: target,
      createdConnections,
      journal: profileJournal,
      onConflict: options.profileOnConflict ?? options.onConflict,
      prune: options.prune === true,
      allowRun: options.allowRun === true,
      only: options.only,
    });

    const problems = checkPreflight(plan, {
      maxChanges: options.maxChanges,
      target: {
        label: environment.label,
        name: environment.name,
        url: environment.url,
        protected: environment.protected,
      },
      confirm: options.confirm,
      snapshotSourceUrl: lean.verified.header.source?.url,
      allowSameSource: options.allowSameSource,
      dryRun: options.dryRun,
    });
    problems.push(...checkProfilePreflight(profilePlan, plan.sends, options, environment));

    if (options.dryRun) {
      const protectedTarget = {
        name: environment.name,
        label: environment.label,
        protected: environment.protected,
      };
      const needsConfirm =
        plan.changes > 0 &&
        environment.protected &&
        checkWriteConfirmed(protectedTarget, options.confirm, '--to') !== undefined;
      return {
        kind: 'dry-run',
        target: environment.label,
        entryCount: lean.entries.length,
        plan,
        profilePlan,
        problems,
        confirmRequired: needsConfirm ? (environment.name ?? environment.label) : undefined,
      };
    }

    if (problems.length > 0) {
      if (options.report) {
        await writeScrubbedFile(
          options.report,
          serializeReport(buildReport(plan, [])) +
            serializeProfileReport(buildProfileReport(profilePlan, new Map())),
        );
      }
      onEvent({ kind: 'refused', problems });
      if (journal?.fresh) {
        // Deleted while this run still holds the lock: a run that takes the lock next must not have
        // its new journal deleted under it.
        await unlink(journal.path).catch(() => undefined);
        await journal.close();
      }
      throw new PreflightError(
        `Pre-flight refused the import into ${environment.label}; nothing was sent`,
        problems,
        { hint: preflightHint(problems, options.snapshot) },
      );
    }

    if (journal !== undefined && !journal.fresh && plan.counts.done + plan.counts.reconcile > 0) {
      onEvent({
        kind: 'resuming',
        done: plan.counts.done,
        inDoubt: plan.counts.reconcile,
        total: plan.steps.length,
      });
    }
    const sends = plan.steps.filter(isSendStep);
    const changeSteps = plan.steps.filter(isChangeStep);
    // A sick service ends the run: about one retry per ten writes, at least 30.
    budget.extend(Math.max(30, Math.ceil((sends.length + changeSteps.length) / 10)));
    onEvent({
      kind: 'run-started',
      target: environment.label,
      sends: sends.length + changeSteps.length,
      total: plan.steps.length,
      concurrency,
      rate: limiter.currentRate(),
      journal: journalPath,
    });
    const activeJournal = journal;
    if (activeJournal === undefined) throw new Error('journal not open');
    let result: Awaited<ReturnType<typeof runImport>>;
    let changeResult: Awaited<ReturnType<typeof runChanges>> = { outcomes: [], stoppedBy: undefined };
    try {
      result = await runImport(
        sends,
        {
          target: {
            create: (body) => createConnection(client, body),
            lookup: (name, signal) => getConnectionByName(client, name, { signal }),
          },
          journal: activeJournal,
          limiter,
          budget,
          log: ports.log,
          signal: ports.signal,
          ...(ports.clock ? { clock: ports.clock } : {}),
          onOutcome: (outcome) => onEvent({ kind: 'entry-settled', outcome }),
        },
        { concurrency },
      );
      // Updates, then deletes (the most destructive last), once every create settled.
      if (result.stoppedBy === undefined && changeSteps.length > 0) {
        const ordered = [
          ...changeSteps.filter((s) => s.kind === 'update'),
          ...changeSteps.filter((s) => s.kind === 'delete'),
        ];
        changeResult = await runChanges(ordered, {
          target: {
            update: (name, body, signal) => updateConnection(client, name, { ...body }, { signal }),
            remove: (name, signal) => deleteConnection(client, name, { signal }),
          },
          journal: activeJournal,
          limiter,
          signal: ports.signal,
          concurrency,
          onOutcome: (outcome) => onEvent({ kind: 'change-settled', outcome }),
        });
      }
    } finally {
      onEvent({ kind: 'run-ended' });
    }

    // Scan profiles, once every connection is settled (they name connections by id).
    let profileOutcomes: Awaited<ReturnType<typeof runProfilePhase>>['outcomes'] = new Map();
    let stoppedBy = result.stoppedBy ?? changeResult.stoppedBy;
    const profileSends = countProfileSends(profilePlan);
    const profileFinishes = profilePlan.steps.some((s) => s.kind === 'done' && s.via === 'lookup');
    if (stoppedBy === undefined && (profileSends > 0 || profileFinishes)) {
      budget.extend(Math.max(10, Math.ceil(profileSends / 10)));
      onEvent({ kind: 'profiles-started', target: environment.label, sends: profileSends });
      const connectionIds = new Map<string, string | undefined>();
      for (const c of await listTarget(client, ports.signal)) connectionIds.set(c.name, c._id);
      const phase = await runProfilePhase(profilePlan, {
        client,
        journal: activeJournal,
        connectionIds,
        limiter,
        signal: ports.signal,
      });
      profileOutcomes = phase.outcomes;
      stoppedBy = phase.stoppedBy;
    }
    await activeJournal.close();

    const report = buildReport(plan, result.outcomes, changeResult.outcomes);
    const profileReport = buildProfileReport(profilePlan, profileOutcomes);
    if (options.report) {
      await writeScrubbedFile(
        options.report,
        serializeReport(report) + serializeProfileReport(profileReport),
      );
      onEvent({ kind: 'file-written', file: 'report', path: options.report });
    }
    if (options.idMap) {
      await writeScrubbedFile(options.idMap, `${JSON.stringify(buildIdMap(report), null, 2)}\n`);
      onEvent({ kind: 'file-written', file: 'id-map', path: options.idMap });
    }
    return {
      kind: 'ran',
      target: environment.label,
      report,
      counts: countOutcomes(report),
      profileReport,
      profileCounts: countProfileOutcomes(profileReport),
      profilesIncluded,
      rateLimited: limiter.rateLimitedCount,
      journal: journalPath,
      reportPath: options.report,
      idMapPath: options.idMap,
      stoppedBy,
    };
  } finally {
    await journal?.close();
    client.close();
  }
}
