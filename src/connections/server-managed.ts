/**
 * Fields the service manages itself (api-notes, "Connection objects"): dropped before a create and
 * ignored by diff. One exact list, used by export, diff and import alike, so that they agree on what a
 * connection "is". No prefix rules: `scan_scope` (a googledrive setting) and any other unknown field
 * is configuration and is kept verbatim.
 */

import { assignOwn } from '../own-property.js';

/** The server-managed top-level fields, by exact name (api-notes). */
export const SERVER_MANAGED_FIELDS: readonly string[] = [
  '_id',
  'id',
  'created_at',
  'updated_at',
  'last_scan_at',
  'last_sub_scan_id',
  'connectionStatusTest',
  'connectionStatusScan',
  'connectionStatusDeleteFindings',
  'test_is_success',
  'test_timestamp',
  'scan_is_success',
  'scan_num_of_objects',
  'scan_timestamp',
  'deletion_is_success',
  'deletion_timestamp',
  'updatedPasswords',
];

const EXACT: ReadonlySet<string> = new Set(SERVER_MANAGED_FIELDS);

/** True for a top-level field the service sets and a client must not send or compare. */
export function isServerManagedField(field: string): boolean {
  return EXACT.has(field);
}

/** A copy of `entry` without its server-managed top-level fields; key order kept. */
export function stripServerManaged<T extends Record<string, unknown>>(entry: T): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(entry)) {
    if (!EXACT.has(key)) assignOwn(out, key, entry[key]);
  }
  return out;
}

/** True when `entry` has a server-managed top-level field (else {@link stripServerManaged} only copies it). */
export function hasServerManagedField(entry: Readonly<Record<string, unknown>>): boolean {
  for (const key of Object.keys(entry)) if (EXACT.has(key)) return true;
  return false;
}
