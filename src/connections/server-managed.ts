/**
 * Fields the service manages itself (api-notes, "Connection objects"): one exact list for export, diff
 * and import. No prefix rules: `scan_scope` (a googledrive setting) is configuration, kept verbatim.
 */

import { assignOwn } from '../own-property.js';

const EXACT: ReadonlySet<string> = new Set([
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
]);

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

export function hasServerManagedField(entry: Readonly<Record<string, unknown>>): boolean {
  for (const key of Object.keys(entry)) if (EXACT.has(key)) return true;
  return false;
}
