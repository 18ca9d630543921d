/**
 * Fields the service manages itself (api-notes, "Connection objects"): dropped before a create and
 * ignored by diff. One list, so that `diff` and `import` agree on what a connection "is".
 */

import { assignOwn } from '../own-property.js';

const EXACT = new Set([
  '_id',
  'id',
  'created_at',
  'updated_at',
  'last_scan_at',
  'connectionStatusTest',
  'connectionStatusScan',
  'last_sub_scan_id',
  'updatedPasswords',
]);
const PREFIXES = ['test_', 'scan_'] as const;

/** True for a top-level field the service sets and a client must not send or compare. */
export function isServerManagedField(field: string): boolean {
  return EXACT.has(field) || PREFIXES.some((prefix) => field.startsWith(prefix));
}

/** A copy of `entry` without its server-managed top-level fields; key order kept. */
export function stripServerManaged<T extends Record<string, unknown>>(entry: T): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) {
    if (!isServerManagedField(key)) assignOwn(out, key, value);
  }
  return out;
}
