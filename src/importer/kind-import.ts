/**
 * What a kind's import (its descriptor's `startImport`, `runImport`) starts from and returns: its reads
 * of the target (started once the journal is locked, all kinds' together) and, kind after kind, its plan,
 * given what the kinds before it hand on ({@link PlanHandOn}); then its run, handed the executor's
 * dependencies and the run's options, and what it hands on to the kinds after it ({@link ImportHandOn}).
 */
import type { HttpClient } from '../api/http.js';
import type { RetryBudget } from '../api/retry-policy.js';
import type { SourceIdChange } from '../connections/references.js';
import type { DdsError } from '../errors.js';
import type { TemplateCatalog } from '../schema/catalog.js';
import type { ExecuteDeps, WriteOutcome } from '../sync/execute.js';
import type { JournalObject } from '../sync/journal/records.js';
import type { RunState } from '../sync/journal/replay.js';
import type { PlanEntry, PreparedEntry } from '../sync/kinds/connection/kind.js';
import type { OnConflict } from '../sync/plan.js';
import type { ImportEvent, ImportOptions } from './import-types.js';
import type { LeanSnapshot } from './lean-snapshot.js';
import type { Overrides } from './overrides.js';

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
  /** The overrides (where a secret an update writes comes from). */
  readonly overrides: Overrides;
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
export function quiet<T>(read: Promise<T>): Promise<T> {
  read.catch(() => undefined);
  return read;
}

/** What a kind's import run is handed: the executor's dependencies and the run's options. */
export interface KindImportRun {
  readonly deps: ExecuteDeps;
  readonly onConflict: OnConflict;
  readonly client: HttpClient;
  readonly budget: RetryBudget & { extend(n: number): void };
  readonly concurrency: number;
  readonly onOutcome: (outcome: WriteOutcome) => void;
  /** Called before the kind's writes start, when they wait on earlier kinds (with its number of writes). */
  readonly onStarted: (sends: number) => void;
}

/**
 * What an earlier kind hands on to later ones, by its object tag: the names (in the target) of objects
 * the run was to create but did not, and the ids the target has now by name, read when first asked.
 */
export interface ImportHandOn {
  readonly notCreated: ReadonlySet<string>;
  readonly ids: () => Promise<ReadonlyMap<string, string | undefined>>;
}

/** One kind's import run: its outcomes, its plan as run, what it hands on, why it stopped. */
export interface KindImportResult<P> {
  readonly outcomes: ReadonlyMap<unknown, unknown>;
  readonly plan: P;
  readonly handOn?: ImportHandOn;
  readonly stoppedBy: DdsError | undefined;
}
