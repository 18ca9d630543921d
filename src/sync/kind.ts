/**
 * A kind of object the engine synchronises (a connection, a scan profile): what the planner, the
 * executor, undo and the commands ask of it without naming it. Each kind is one file of `kinds/`,
 * which exports its descriptor; {@link KINDS} lists them in the order an import writes them (a kind
 * after the kinds its objects reference).
 */
import type { HttpClient } from '../api/http.js';
import type { KindWriter } from './execute.js';
import type { JournalObject } from './journal/records.js';
import { connectionKind } from './kinds/connection.js';
import { scanProfileKind } from './kinds/scan-profile.js';

/** What the engine knows of a kind; `P` is its import plan, `Key` where an import's result holds it. */
export interface SyncKind<P = unknown, Key extends string = string> {
  /** The journal's tag for its records (`object`). */
  readonly object: JournalObject;
  /** What messages call one object of the kind. */
  readonly label: string;
  /** How the executor writes one, bound to a client. */
  writer(client: HttpClient): KindWriter;

  // import
  /** Where an import's result holds its plan ({@link KindPlans}). */
  readonly planKey: Key;
  /** Its plan in a dry run's text: its lines, in step order. */
  planText(plan: P): readonly string[];
  /** Its counts on a dry run's `Total:` line, in order (none: not counted there). */
  planTotals(plan: P): Readonly<Record<string, number>> | undefined;
  /** Its members of a dry run's `--format json` document. */
  planJson(plan: P): Readonly<Record<string, unknown>>;
  /** Its parts of a dry run's Markdown. */
  planMarkdown(plan: P): KindMarkdown;
}

/** A kind's parts of a dry run's Markdown (`import --dry-run --format markdown`). */
export interface KindMarkdown {
  /** Its row of the counts table: its name, then creates, updates, deletes, unchanged (none: no row). */
  readonly row: readonly (string | number)[] | undefined;
  /** How many of its steps change nothing, by what they mean, for the `Also:` line. */
  readonly also: readonly (readonly [UnchangingStep, number])[];
  /** The `Also:` line names the kind (`3 scan profiles skipped`); else the counts stand alone. */
  readonly alsoNamed: boolean;
  /** Its sections: a title and the items (each item's lines). */
  readonly sections: readonly (readonly [string, readonly (readonly string[])[]])[];
}

/** What a step that changes nothing can mean (`plan-markdown.ts` words them). */
export type UnchangingStep = 'exists' | 'done' | 'skipped' | 'conflict' | 'invalid' | 'blocked';

/** Every kind, in the order an import writes them. */
export const KINDS = [connectionKind, scanProfileKind] as const;

type PlanOf<K> = K extends SyncKind<infer P, string> ? P : never;

/** Every kind's import plan, under its `planKey`. */
export type KindPlans = { readonly [K in (typeof KINDS)[number] as K['planKey']]: PlanOf<K> };

/** Each kind with its plan of `plans`, in the order of {@link KINDS}. */
export function eachPlan(plans: KindPlans): readonly (readonly [SyncKind, unknown])[] {
  return KINDS.map((kind) => [kind, plans[kind.planKey]] as const);
}

/** The executor's writer of every kind, bound to `client`. */
export function writersFor(client: HttpClient): Readonly<Record<JournalObject, KindWriter>> {
  return Object.fromEntries(KINDS.map((k) => [k.object, k.writer(client)])) as Record<
    JournalObject,
    KindWriter
  >;
}
