/** What a kind's import (`startImport`, `runImport` of its descriptor) is handed and hands on. */
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
  /** A snapshot entry ready to send, prepared again each time. */
  readonly prepare: (entry: PlanEntry) => PreparedEntry;
  readonly catalog: TemplateCatalog;
  readonly overrides: Overrides;
  /** Source-environment ids the preparer dropped, by entry name. */
  readonly sourceIdChanges: ReadonlyMap<string, readonly SourceIdChange[]>;
  readonly onEvent: (event: ImportEvent) => void;
}

/** What a kind's plan hands on: the target's objects, and those this run creates (name -> target name). */
export interface PlanHandOn {
  readonly listed: readonly { readonly name: string; readonly _id?: string | undefined }[];
  readonly created: ReadonlyMap<string, string>;
}

/** A kind's plan of an import and what it hands on. */
export interface KindPlanResult<P> {
  readonly plan: P;
  readonly handOn?: PlanHandOn;
}

/** Awaits a kind's reads, then plans it, given the hand-ons of the kinds before it. */
export type KindPlanner<P> = (
  continuing: RunState | undefined,
  /** What earlier runs created under another name (`--on-conflict rename`), by the snapshot's name. */
  renamed: ReadonlyMap<string, string>,
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
  /** Called before the kind's writes start, when they wait on earlier kinds. */
  readonly onStarted: (sends: number) => void;
}

/** What a kind's run hands on: the names it did not create, and the target's ids (read when asked). */
export interface ImportHandOn {
  readonly notCreated: ReadonlySet<string>;
  readonly ids: () => Promise<ReadonlyMap<string, string | undefined>>;
}

/** One kind's import run: its outcomes, its plan as run, what it hands on, why it stopped early. */
export interface KindImportResult<P> {
  readonly outcomes: ReadonlyMap<unknown, unknown>;
  readonly plan: P;
  readonly handOn?: ImportHandOn;
  readonly stoppedBy: DdsError | undefined;
}
