/**
 * How real deployments differ from the spec, behind switches (the emulator's own reading of
 * `api-notes.md`, independent of the client):
 * - a refused token answered `200` with `{"success":false,"message":"Failed to authenticate token."}`
 *   labelled `text/html` ([seen] on `GET /api/v1/ds-connections`), instead of the spec's 401;
 * - lists paged by `offset` instead of `skip` ([code] BigID's SIEM connector pages `all-cases` with
 *   `limit` + `offset`), or by neither (every page is the first: what a client must notice);
 * - cases whose write id is a Mongo `_id` beside a friendly `caseId` such as `SPC-12` ([docs]);
 * - scan profiles that list their data sources by connection name ([code] BigID's CI action).
 */

import { isObjectId, stableObjectId } from './ids.js';
import type { ScanProfileRecord, SecurityCaseRecord, SeedCase } from './types.js';

/** How a refused token is answered: the spec's 401, or a deployment's 200 with `success:false`. */
export type AuthRefusal = 401 | 200;

/** Which query parameter a list honours for its start: `skip` (the spec), `offset`, or neither. */
export type PagingParameter = 'skip' | 'offset' | 'none';

/** Which ids cases carry: `same` (`id` = `caseId`, the spec's), or `mongo` (`_id` + friendly `caseId`). */
export type CaseIdStyle = 'same' | 'mongo';

/** How scan profiles answer `dataSourceList`: as stored, or as connection names. */
export type ProfileSourceStyle = 'as-stored' | 'names';

/** The message a real deployment sends with a refused token ([seen]). */
export const REFUSED_TOKEN_MESSAGE = 'Failed to authenticate token.';

/** The answer to a request whose token is refused. */
export function refusedTokenReply(mode: AuthRefusal): {
  readonly status: number;
  readonly json?: unknown;
  readonly text?: string;
  readonly headers?: Readonly<Record<string, string>>;
} {
  if (mode === 401) return { status: 401, text: 'Unauthorized' };
  return {
    status: 200,
    json: { success: false, message: REFUSED_TOKEN_MESSAGE },
    headers: { 'content-type': 'text/html; charset=utf-8' },
  };
}

/** The start of a page: the honoured parameter's value (0 when absent; `none` always 0). */
export function pageStart(
  params: URLSearchParams,
  mode: PagingParameter,
  parse: (raw: string | null, name: string, fallback: number) => number,
): number {
  if (mode === 'none') return 0;
  return parse(params.get(mode), mode, 0);
}

/** The id the write endpoints of a case take: `_id` when the case has one, else `caseId ?? id`. */
export function caseKeyOf(c: Readonly<Record<string, unknown>>): string {
  if (typeof c._id === 'string') return c._id;
  return String(c.caseId ?? c.id);
}

/**
 * Cases as a deployment with Mongo ids holds them: `_id` (the case's 24-hex id, or one derived from
 * it) and a friendly `caseId` `SPC-<n>` (n from 1, in seed order); no `id`. A case that already has
 * an `_id` is kept as it is.
 */
export function toMongoCases(cases: readonly SeedCase[]): SeedCase[] {
  return cases.map((c, i) => {
    if (typeof c._id === 'string') return c;
    const { id, caseId, ...rest } = c;
    const old = String(caseId ?? id);
    return { ...rest, _id: isObjectId(old) ? old : stableObjectId(`case:${old}`), caseId: `SPC-${i + 1}` };
  });
}

/** `profile` with each `dataSourceList` element that is a connection's `_id` given as its name. */
export function withSourceNames(
  profile: ScanProfileRecord,
  nameOfId: (id: string) => string | undefined,
): ScanProfileRecord {
  return { ...profile, dataSourceList: profile.dataSourceList.map((ref) => nameOfId(ref) ?? ref) };
}

/** A case as the store keeps it (re-exported for the handlers' signatures). */
export type { SecurityCaseRecord };
