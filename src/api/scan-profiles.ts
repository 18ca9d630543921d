/** Scan profiles (spec 4.2, 4.3). */
import type { ScanProfile } from '../model/scan-profile.js';
import { isRecord } from '../own-property.js';
import type { HttpClient } from './http.js';
import { type Found, requestOrAbsent } from './http-options.js';
import { readListPage, unexpectedShape } from './paging.js';

/** The profile in an answer: the body itself, or `data`, `data.scanProfile`, `scanProfile`. */
function readProfile(body: unknown, path: string, fallback?: Record<string, unknown>): ScanProfile {
  const top = isRecord(body) ? body : undefined;
  const data = top && isRecord(top.data) ? top.data : undefined;
  const candidates = [data?.scanProfile, data, top?.scanProfile, top];
  for (const c of candidates) {
    if (!isRecord(c)) continue;
    const id = typeof c._id === 'string' ? c._id : typeof c.id === 'string' ? c.id : undefined;
    if (id === undefined && typeof c.name !== 'string') continue;
    // A create may answer only the id: what was sent fills the rest.
    return {
      ...fallback,
      ...c,
      ...(id === undefined ? {} : { _id: id }),
    } as unknown as ScanProfile;
  }
  throw unexpectedShape(path, 'no scan profile object in the answer');
}

/** POST /scanProfiles. Not retried (it creates, and a one-time profile starts a scan). */
export async function createScanProfile(
  client: HttpClient,
  profile: Record<string, unknown>,
): Promise<ScanProfile> {
  const body = await client.request<unknown>({
    method: 'POST',
    path: '/scanProfiles',
    body: profile,
    retry: 'never',
  });
  return readProfile(body, '/scanProfiles', profile);
}

/** GET /scanProfiles/{id}. */
export async function getScanProfile(client: HttpClient, id: string): Promise<ScanProfile> {
  const path = `/scanProfiles/${encodeURIComponent(id)}`;
  const body = await client.request<unknown>({ method: 'GET', path, retry: 'safe' });
  return readProfile(body, path);
}

/** GET /scanProfiles: `{"scanProfiles":[...]}` (api-notes [code]) or in `data`; `ifServed`: none on 404. */
export async function listScanProfiles(
  client: HttpClient,
  options: { readonly signal?: AbortSignal; readonly ifServed?: boolean } = {},
): Promise<ScanProfile[]> {
  const path = '/scanProfiles';
  const answer = await requestOrAbsent(
    client,
    { method: 'GET', path, retry: 'safe', signal: options.signal },
    (error) => options.ifServed === true && error.status === 404,
  );
  if (answer.kind === 'absent') return [];
  return readListPage(answer.value, 'scanProfiles', path, false).items as unknown as ScanProfile[];
}

/** PUT /scanProfiles/{id} (api-notes [guess]), idempotent: retried. The profile answered, or the one sent. */
export async function updateScanProfile(
  client: HttpClient,
  id: string,
  profile: Record<string, unknown>,
): Promise<Found<ScanProfile>> {
  const path = `/scanProfiles/${encodeURIComponent(id)}`;
  const answer = await requestOrAbsent(client, { method: 'PUT', path, body: profile, retry: 'safe' });
  if (answer.kind === 'absent') return answer;
  try {
    return { kind: 'done', value: readProfile(answer.value, path, { ...profile, _id: id }) };
  } catch {
    return { kind: 'done', value: { ...profile, _id: id } as unknown as ScanProfile };
  }
}

/**
 * DELETE /scanProfiles/{id} (api-notes [guess]), retried: after a retry, `absent` may mean an earlier
 * attempt deleted it. An UnavailableError: unknown outcome, the caller looks up.
 */
export async function deleteScanProfile(
  client: HttpClient,
  id: string,
): Promise<{ readonly kind: 'done' } | { readonly kind: 'absent' }> {
  const path = `/scanProfiles/${encodeURIComponent(id)}`;
  const answer = await requestOrAbsent(client, { method: 'DELETE', path, retry: 'safe' });
  return { kind: answer.kind };
}
