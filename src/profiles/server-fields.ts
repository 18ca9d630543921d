/**
 * Scan profile fields the service sets, dropped before a create; decided where the spec is silent:
 * identifiers, revision counters, audit stamps and run times (`schedule`, `owners`, `active` stay).
 */
export const PROFILE_SERVER_FIELDS: readonly string[] = [
  '_id',
  'id',
  '__v',
  'createdAt',
  'updatedAt',
  'created_at',
  'updated_at',
  'createdBy',
  'updatedBy',
  'created_by',
  'updated_by',
  'lastRunAt',
  'last_run_at',
  'nextRunAt',
  'next_run_at',
];

const SERVER_FIELDS = new Set(PROFILE_SERVER_FIELDS);

/** True for a top-level profile field the service sets. */
export function isProfileServerField(field: string): boolean {
  return SERVER_FIELDS.has(field);
}

/** A copy of `profile` without its server-managed fields; key order kept. */
export function stripProfileServerFields(
  profile: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(profile)) if (!SERVER_FIELDS.has(key)) out[key] = value;
  return out;
}
