/**
 * Each kind's import plan, which its descriptor (`startImport`) names: its reads of the target (started
 * once the journal is locked, all kinds' together) and, kind after kind, its plan, given what the kinds
 * before it hand on ({@link PlanHandOn}). Connections: listed (compared with their entries as pages
 * arrive when converging), checked against their templates and references, planned by `planImport`;
 * their template schemas are compiled while the reads are out. Scan profiles: listed when the snapshot
 * includes them, planned by `planProfiles` on the connections the target holds and those this run
 * creates.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { HttpClient } from '../api/http.js';
import { listScanProfiles } from '../api/scan-profiles.js';
import {
  checkEntryReferences,
  createReferenceCollector,
  describeReferenceWarnings,
  describeSourceIdDrops,
  type ReferencingEntry,
  type SourceIdChange,
  type TargetReferences,
} from '../connections/references.js';
import type { Problem } from '../errors.js';
import type { TemplateCatalog } from '../schema/catalog.js';
import type { JournalObject } from '../sync/journal/records.js';
import { type RunState, writesOf } from '../sync/journal/replay.js';
import {
  type ImportPlan,
  isSendStep,
  type JournaledWrite,
  type PlanEntry,
  type PreparedEntry,
  planImport,
  type TargetConnection,
} from '../sync/kinds/connection.js';
import { type ProfilePlan, planProfiles } from '../sync/kinds/scan-profile.js';
import { fetchTargetReferences } from '../validate/target-references.js';
import type { ConvergeHelpers } from './converge.js';
import { checkOnly, listTarget, targetSummarizer, withReferenceChecks } from './import-target.js';
import type { ImportEvent, ImportOptions } from './import-types.js';
import type { LeanSnapshot } from './lean-snapshot.js';
import { checkEntryForSend, formatWarning } from './preflight.js';

/** What every kind of an import plans from, known before the target is read. */
export interface ImportStart {
  readonly options: ImportOptions;
  readonly lean: LeanSnapshot;
  readonly client: HttpClient;
  /** Ends the reads (Ctrl-C, or the journal could not be opened). */
  readonly signal: AbortSignal;
  /** A snapshot entry ready to send, prepared again each time (overrides applied). */
  readonly prepare: (entry: PlanEntry) => PreparedEntry;
  readonly catalog: TemplateCatalog;
  /** The comparison and images of `--on-conflict update` and `--prune`; undefined when not converging. */
  readonly converge: ConvergeHelpers | undefined;
  /** Source-environment ids the preparer dropped, by entry name (warned of when referenced). */
  readonly sourceIdChanges: ReadonlyMap<string, readonly SourceIdChange[]>;
  readonly onEvent: (event: ImportEvent) => void;
}

/**
 * What a kind hands on to the kinds after it, by its object tag: the objects the target holds (name and
 * id, as listed) and those this run creates or created (snapshot name -> name in the target).
 */
export interface PlanHandOn {
  readonly listed: readonly { readonly name: string; readonly _id?: string | undefined }[];
  readonly created: ReadonlyMap<string, string>;
}

/** A kind's plan of an import and what it hands on. */
export interface KindPlanResult<P> {
  readonly plan: P;
  readonly handOn?: PlanHandOn;
}

/**
 * Awaits a kind's reads (`continuing`: the run being finished), then plans it when every kind's reads
 * are in, kind after kind (`earlier`: the hand-ons of the kinds before it).
 */
export type KindPlanner<P> = (
  continuing: RunState | undefined,
) => Promise<(earlier: ReadonlyMap<JournalObject, PlanHandOn>) => KindPlanResult<P>>;

/** A read whose failure ends the run when awaited, and is not unhandled before. */
function quiet<T>(read: Promise<T>): Promise<T> {
  read.catch(() => undefined);
  return read;
}

/** The connection kind's import: its reads now, its plan when asked (see the module comment). */
export function startConnectionImport(start: ImportStart): KindPlanner<ImportPlan> {
  const { options, lean, prepare, catalog, converge } = start;
  // Converging, each listed connection is compared with its snapshot entry as its page arrives, and
  // only the outcome kept (and its image when it may be updated or deleted).
  const summarize = converge && targetSummarizer(lean.entries, prepare, options, converge);
  const listing = quiet(listTarget(start.client, start.signal, summarize));
  // Scanner groups and stored credentials the target holds (a 404 leaves that kind unchecked).
  const referencesRead = quiet(fetchTargetReferences(start.client, start.signal));
  return async (continuing) => {
    const journal = writesOf(continuing, 'connection');
    // The template schemas of the entries still to create are compiled while the reads are out.
    await nextTurn();
    const typesToCheck = new Set<string>();
    for (const entry of lean.entries) {
      const written = journal.get(entry.name);
      if (written?.op !== 'create' || written.state !== 'done') typesToCheck.add(entry.type);
    }
    catalog.compile(typesToCheck);
    const target = await listing;
    const profileNames = lean.profiles.map((p) => p.scanProfile.name);
    if (options.prune) checkOnly(options.only, [...lean.entries, ...target], profileNames);
    const targetReferences = await referencesRead;
    return () => planConnections(start, journal, target, targetReferences);
  };
}

/** The connection plan of an import, once the target is read: its warnings told, its hand-on. */
function planConnections(
  start: ImportStart,
  journal: ReadonlyMap<string, JournaledWrite>,
  target: readonly TargetConnection[],
  targetReferences: TargetReferences,
): KindPlanResult<ImportPlan> {
  const { options, lean, prepare, catalog, converge } = start;
  const warnings = new Map<string, Problem>();
  // The references of the entries the run would send (or refuses), collected as they are checked.
  const references = createReferenceCollector();
  const referencing = new Set<string>();
  const noteReferences = (entry: ReferencingEntry): void => {
    references.add(entry);
    referencing.add(entry.name);
  };
  const input: Parameters<typeof planImport>[0] = {
    entries: lean.entries,
    prepare,
    target,
    journal,
    onConflict: options.onConflict,
    only: options.only,
    prune: options.prune === true,
    ...(converge ? { converge: withReferenceChecks(converge, targetReferences, noteReferences) } : {}),
    check: (_entry, prepared) => {
      const body = prepared();
      const checked = checkEntryForSend(body, catalog);
      noteReferences(body);
      for (const w of checked.warnings) {
        const line = formatWarning(w);
        if (!warnings.has(line)) warnings.set(line, w);
      }
      return [...checked.problems, ...checkEntryReferences(body, targetReferences)];
    },
  };
  const planned = planImport(input);
  const { onEvent, sourceIdChanges } = start;
  if (warnings.size > 0) onEvent({ kind: 'template-warnings', warnings: [...warnings.values()] });
  // Kinds the target could not list, certificates (never checkable), source-environment ids dropped.
  const referenceWarnings = [
    ...describeReferenceWarnings(references.needs(), targetReferences),
    ...describeSourceIdDrops(new Map([...sourceIdChanges].filter(([name]) => referencing.has(name)))),
  ];
  if (referenceWarnings.length > 0) onEvent({ kind: 'reference-warnings', messages: referenceWarnings });
  const replan = (found: Parameters<NonNullable<ImportPlan['replan']>>[0]) => {
    const names = new Set(found.map((c) => c.name));
    const entries = lean.entries.filter((e) => names.has(e.name));
    const listed = found.map((c) => ({ name: c.name, _id: c._id, connection: c }));
    return planImport({ ...input, entries, target: listed, journal: new Map(), prune: false });
  };
  const created = new Map<string, string>();
  for (const step of planned.steps)
    if (isSendStep(step) || step.kind === 'done') created.set(step.name, step.targetName);
  return { plan: { ...planned, replan }, handOn: { listed: target, created } };
}

/** The scan profile kind's import: its read now, its plan after the connections' (module comment). */
export function startProfileImport({ options, lean, client, signal }: ImportStart): KindPlanner<ProfilePlan> {
  const included = lean.verified.header.include.includes('scanProfiles');
  const listing = quiet(included ? listScanProfiles(client, { signal }) : Promise.resolve([]));
  return async (continuing) => {
    const targetProfiles = await listing;
    return (earlier) => {
      const connections = earlier.get('connection');
      const plan = planProfiles({
        profiles: lean.profiles,
        included,
        targetProfiles,
        targetConnections: connections?.listed ?? [],
        createdConnections: connections?.created ?? new Map(),
        journal: writesOf(continuing, 'scan-profile'),
        onConflict: options.profileOnConflict ?? options.onConflict,
        prune: options.prune === true,
        allowRun: options.allowRun === true,
        only: options.only,
      });
      return { plan };
    };
  };
}
