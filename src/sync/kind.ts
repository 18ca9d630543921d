/**
 * A kind of object the engine synchronises (a connection, a scan profile): what the planner, the
 * executor, undo and the commands ask of it without naming it. Each kind is one file of `kinds/`,
 * which exports its descriptor; {@link KINDS} lists them in the order an import writes them (a kind
 * after the kinds its objects reference).
 */
import type { HttpClient } from '../api/http.js';
import type { KindWriter } from './execute.js';
import { acceptJournalKinds, type JournalObject } from './journal/records.js';
import { connectionKind } from './kinds/connection.js';
import { scanProfileKind } from './kinds/scan-profile.js';
import type { History, RestoringStep, UndoContext, UndoStep } from './undo-plan.js';

/** What the engine knows of a kind. */
export interface SyncKind {
  /** The journal's tag for its records (`object`). */
  readonly object: JournalObject;
  /** What messages call one object of the kind. */
  readonly label: string;
  /** How the executor writes one, bound to a client. */
  writer(client: HttpClient): KindWriter;
  // undo
  /** The kind's objects in the target now, as undo reads them (streamed where the listing is large). */
  current(client: HttpClient, signal: AbortSignal): AsyncIterable<Readonly<Record<string, unknown>>>;
  /** The undo step of one object a run touched, against the target's object now (pure). */
  undo(
    history: History,
    current: Readonly<Record<string, unknown>> | undefined,
    context: UndoContext,
  ): UndoStep;
  /** The tag of the kind whose objects this kind's objects name by id (undo remaps them by name). */
  readonly references?: JournalObject;
  /** Written one request at a time (creating a scan profile may start a scan). */
  readonly oneAtATime: boolean;
  /** Reads what a restoring step's body is placed on (the target's ids now) when its writes start. */
  placeUndoBodies?(
    client: HttpClient,
    signal: AbortSignal,
  ): Promise<(step: RestoringStep) => Readonly<Record<string, unknown>>>;
  /** What begins an undo line about one of its objects (`scan profile `; '' for the first kind). */
  readonly undoPrefix: string;
  /** Its update and delete intents may lack a before-image (earlier versions wrote none). */
  readonly beforeOptional: boolean;
  /** The key of its counts in a run of `runs --format json` (`connections`). */
  readonly runsKey: string;
}

/** Every kind, in the order an import writes them. */
export const KINDS: readonly SyncKind[] = [connectionKind, scanProfileKind];
acceptJournalKinds(KINDS);

/** The executor's writer of every kind, bound to `client`. */
export function writersFor(client: HttpClient): Readonly<Record<JournalObject, KindWriter>> {
  return Object.fromEntries(KINDS.map((k) => [k.object, k.writer(client)])) as Record<
    JournalObject,
    KindWriter
  >;
}

/** The kind whose journal tag is `object`. */
export function kindOf(object: JournalObject): SyncKind {
  const kind = KINDS.find((k) => k.object === object);
  if (kind === undefined) throw new Error(`no kind ${JSON.stringify(object)}`);
  return kind;
}
