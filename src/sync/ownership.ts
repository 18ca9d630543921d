/**
 * Whose an in-doubt create found by name is: `not ours` when the service stamped it (`created_at`:
 * api-notes.md, "Connection objects"; scan profiles: `createdAt`) before this run's first intent, by more
 * than the clock skew; else in doubt. A stamp missing or not ISO 8601 with a zone proves nothing.
 */

/** How far the service's clock may be behind ours; larger errs safe (`not ours` is never deleted). */
export const CLOCK_SKEW_MS = 60_000;

const ISO_WITH_ZONE = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)$/;

/** The found object's stamp when it proves the object older than an intent written at `intentMs`. */
export function notOursStamp(createdAt: unknown, intentMs: number | undefined): string | undefined {
  if (typeof createdAt !== 'string' || !ISO_WITH_ZONE.test(createdAt) || intentMs === undefined)
    return undefined;
  return Date.parse(createdAt) < intentMs - CLOCK_SKEW_MS ? createdAt : undefined;
}

/** Why an object is not ours, for reports, `runs` and undo. */
export function notOursReason(createdAt: string): string {
  return `not ours: created by someone else at ${createdAt}, before this run's request`;
}
