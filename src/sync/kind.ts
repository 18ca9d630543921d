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
import type { History, UndoContext, UndoStep } from './undo-plan.js';

/** What the engine knows of a kind. */
export interface SyncKind {
  /** The journal's tag for its records (`object`). */
  readonly object: JournalObject;
  /** What messages call one object of the kind. */
  readonly label: string;
  /** How the executor writes one, bound to a client. */
  writer(client: HttpClient): KindWriter;
  // undo
  /** The undo step of one object a run touched, against the target's object now (pure). */
  undo(
    history: History,
    current: Readonly<Record<string, unknown>> | undefined,
    context: UndoContext,
  ): UndoStep;
}

/** Every kind, in the order an import writes them. */
export const KINDS: readonly SyncKind[] = [connectionKind, scanProfileKind];

/** The executor's writer of every kind, bound to `client`. */
export function writersFor(client: HttpClient): Readonly<Record<JournalObject, KindWriter>> {
  return Object.fromEntries(KINDS.map((k) => [k.object, k.writer(client)])) as Record<
    JournalObject,
    KindWriter
  >;
}
