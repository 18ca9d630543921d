/** What the engine asks of a kind of object it synchronises; each kind is one folder of `kinds/`. */
import type { HttpClient } from '../api/http.js';
import type { Problem } from '../errors.js';
import type {
  ImportHandOn,
  ImportStart,
  KindImportResult,
  KindImportRun,
  KindPlanner,
} from '../importer/kind-import.js';
import type { KindWriter, SettledOutcome } from './execute.js';
import { acceptJournalKinds, type JournalObject } from './journal/records.js';
import type { ConnectionRun } from './kinds/connection/import.js';
import { connectionKind, type ImportPlan } from './kinds/connection/kind.js';
import type { ProfileRun } from './kinds/scan-profile/import.js';
import { type ProfilePlan, scanProfileKind } from './kinds/scan-profile/kind.js';
import type { History, RestoringStep, UndoContext, UndoStep } from './undo-plan.js';

/** What the engine knows of a kind; `P` is its import plan, `R` its members of a run's result. */
export interface SyncKind<P = unknown, R = unknown> {
  /** The journal's tag for its records (`object`). */
  readonly object: JournalObject;
  /** What messages call one object of the kind. */
  readonly label: string;
  writer(client: HttpClient): KindWriter;

  // import
  /** Starts its reads of the target; what it returns plans it, after the kinds before it. */
  startImport(start: ImportStart): KindPlanner<P>;
  readonly planKey: keyof KindPlans;
  /** Its lines of a dry run's text, in step order. */
  planText(plan: P): readonly string[];
  /** Its counts on a dry run's `Total:` line (none: not counted there). */
  planTotals?(plan: P): Readonly<Record<string, number>>;
  planJson(plan: P): Readonly<Record<string, unknown>>;
  planMarkdown(plan: P): KindMarkdown;
  /** Runs its writes through the executor, given the hand-ons of the kinds before it. */
  runImport(
    plan: P,
    run: KindImportRun,
    earlier: ReadonlyMap<JournalObject, ImportHandOn>,
  ): Promise<KindImportResult<P>>;
  /** Its members of a run's result (`outcomes` none: nothing ran). */
  report(plan: P, outcomes: ReadonlyMap<unknown, unknown> | undefined): R;
  /** Its `--report` records, each naming `run` (null: nothing was written). */
  reportRecords(result: R, run: number | null): Iterable<object>;
  /** Its summary of a run on stdout (none: not printed). */
  summary(result: R, target: string): string | undefined;
  /** Its members of a run's `--json` document: `head` after the target, `tail` after the id map. */
  runJson(result: R): { readonly head?: object; readonly tail?: object };
  /** Its failed writes in words (`2 entries`); undefined when none failed. */
  failed(result: R): string | undefined;
  /** The writes of its plan that `--max-changes` and a protected target count. */
  changes(plan: P): number;
  /** The steps the executor runs, when not its `changes` (a run starts when any kind has one). */
  writes?(plan: P): number;
  /**
   * The outcomes its plan observed, without a request, of writes the run being finished left in doubt
   * (a delete whose object is gone): journaled before the run's writes, so no intent stays open.
   */
  settled?(plan: P): readonly SettledOutcome[];
  /** Its pre-flight problems; `before`: the changes of the kinds before it. */
  preflight(plan: P, max: number | undefined, before: number): readonly Problem[];
  /** Its part of the run's `resuming` and `run-started` messages and budget (none: announced alone). */
  share?(plan: P): {
    readonly done: number;
    readonly inDoubt: number;
    readonly sends: number;
    readonly total: number;
  };
  /** Its entries of `--id-map` (source id -> name and id in the target). */
  idMap?(result: R): Readonly<Record<string, unknown>>;

  // undo
  /** Its objects in the target now (streamed where the listing is large). */
  current(client: HttpClient, signal: AbortSignal): AsyncIterable<Listed> | Promise<Iterable<Listed>>;
  /** The undo step of one object a run touched, against the target's object now (pure). */
  undo(history: History, current: Listed | undefined, context: UndoContext): UndoStep;
  /** The kind whose objects this kind's name by id (undo remaps them by name). */
  readonly references?: JournalObject;
  /** Written one request at a time (creating a scan profile may start a scan). */
  readonly oneAtATime?: boolean;
  /** Reads the target's ids a restoring step's body is placed on, when its writes start. */
  placeUndoBodies?(client: HttpClient, signal: AbortSignal): Promise<(step: RestoringStep) => Listed>;
  /** Its update and delete intents may lack a before-image (earlier versions wrote none). */
  readonly beforeOptional?: boolean;
  /** The key of its counts in `runs --format json` (`connections`). */
  readonly runsKey: string;
}

type Listed = Readonly<Record<string, unknown>>;

/** A kind's parts of a dry run's Markdown (`import --dry-run --format markdown`). */
export interface KindMarkdown {
  /** Its row of the counts table: name, creates, updates, deletes, unchanged (none: no row). */
  readonly row: readonly (string | number)[] | undefined;
  /** How many of its steps change nothing, by what they mean, for the `Also:` line. */
  readonly also: readonly (readonly [UnchangingStep, number])[];
  /** The `Also:` line names the kind (`3 scan profiles skipped`). */
  readonly alsoNamed?: boolean;
  /** Its sections: a title and the items (each item's lines). */
  readonly sections: readonly (readonly [string, readonly (readonly string[])[]])[];
}

/** What a step that changes nothing can mean (`plan-markdown.ts` words them). */
export type UnchangingStep = 'exists' | 'done' | 'skipped' | 'conflict' | 'invalid' | 'blocked';

/** Every kind, in the order an import writes them (a kind after the kinds it references). */
export const KINDS: readonly SyncKind[] = [connectionKind, scanProfileKind];
acceptJournalKinds(KINDS);

/** Every kind's import plan, under its `planKey`. */
export interface KindPlans {
  readonly plan: ImportPlan;
  readonly profilePlan: ProfilePlan;
}

/** Every kind's members of a run's result (`report`). */
export type KindRuns = ConnectionRun & ProfileRun;

/** Every kind's members of a run's result, from its plan and its outcomes. */
export function runsOf(
  plans: KindPlans,
  outcomes?: Partial<Record<JournalObject, ReadonlyMap<unknown, unknown>>>,
): KindRuns {
  return Object.assign({}, ...KINDS.map((k) => k.report(plans[k.planKey], outcomes?.[k.object])));
}

/** Every kind's `--report` records of a run's result, in the order of {@link KINDS}. */
export function* reportRecordsOf(result: KindRuns, run: number | undefined): Iterable<object> {
  for (const k of KINDS) yield* k.reportRecords(result, run ?? null);
}

/** Each kind with its plan of `plans`, in the order of {@link KINDS}. */
export function eachPlan(plans: KindPlans): readonly (readonly [SyncKind, unknown])[] {
  return KINDS.map((kind) => [kind, plans[kind.planKey]] as const);
}

/** The executor's writer of every kind, bound to `client`. */
export function writersFor(client: HttpClient): Partial<Record<JournalObject, KindWriter>> {
  return Object.fromEntries(KINDS.map((k) => [k.object, k.writer(client)]));
}

export function kindOf(object: JournalObject): SyncKind {
  const kind = KINDS.find((k) => k.object === object);
  if (kind === undefined) throw new Error(`no kind ${JSON.stringify(object)}`);
  return kind;
}
