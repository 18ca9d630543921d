/**
 * An import's entries checked while the target is listed. The plan checks every entry it would send
 * (template, secrets left masked, placeholders: `checkEntryForSend`) only once the target's listing
 * has arrived; the entries still to send can be checked before, in the time the listing takes (a
 * round trip, or many pages of a large target), and what each check found kept for the plan, which
 * then checks only the references against the target and the entries not reached yet.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type ReferencingEntry, referencingOnly } from '../connections/references.js';
import type { Problem } from '../errors.js';
import type { PlanEntry, PreparedEntry } from './plan.js';
import { checkEntryForSend, type EntryTemplates } from './preflight.js';

/** What checking one entry found. */
export interface EntryCheck {
  readonly problems: readonly Problem[];
  readonly warnings: readonly Problem[];
  /** The entry as its references are read (checked against the target by the plan). */
  readonly referencing: ReferencingEntry;
}

/** Check a prepared entry for sending. */
export function checkPreparedEntry(entry: PreparedEntry, templates: EntryTemplates): EntryCheck {
  const { problems, warnings } = checkEntryForSend(entry, templates);
  return { problems, warnings, referencing: entry };
}

/** Entries checked between two looks at whether the listing has arrived (about 1 ms of work). */
const CHECKS_PER_TURN = 32;

/**
 * At most this many checks are kept (their problems and warnings, and a few fields each for their
 * references: about 150 bytes an entry without problems): past it, the plan checks the rest itself.
 */
export const MAX_EARLY_CHECKS = 20_000;

/**
 * Check the `wanted` entries in order until `until` settles (the listing, resolved or not), a few at a
 * time, giving the event loop a turn in between (the listing's pages are read meanwhile). Resolves to
 * what each check found, by name; only a reference fields' copy of each entry is kept.
 */
export async function checkWhileWaiting(
  entries: readonly PlanEntry[],
  wanted: (entry: PlanEntry) => boolean,
  until: Promise<unknown>,
  check: (entry: PlanEntry) => EntryCheck,
  limit = MAX_EARLY_CHECKS,
): Promise<ReadonlyMap<string, EntryCheck>> {
  const found = new Map<string, EntryCheck>();
  let settled = false;
  const stop = () => {
    settled = true;
  };
  until.then(stop, stop);
  let i = 0;
  while (!settled && i < entries.length && found.size < limit) {
    const end = Math.min(entries.length, i + CHECKS_PER_TURN);
    for (; i < end && found.size < limit; i++) {
      const entry = entries[i] as PlanEntry;
      if (!wanted(entry)) continue;
      const checked = check(entry);
      found.set(entry.name, { ...checked, referencing: referencingOnly(checked.referencing) });
    }
    await nextTurn();
  }
  return found;
}
