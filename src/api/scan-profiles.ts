/** Scan profiles (spec 4.2, 4.3). */

import type { ScanProfile } from '../model/scan-profile.js';
import type { HttpClient } from './http.js';
import { isRecord, unexpectedShape } from './paging.js';

/** The profile in an answer: the body itself, or `data`, `data.scanProfile`, `scanProfile`. */
function readProfile(body: unknown, path: string, fallback?: Record<string, unknown>): ScanProfile {
  const top = isRecord(body) ? body : undefined;
  const data = top && isRecord(top.data) ? top.data : undefined;
  const candidates = [data?.scanProfile, data, top?.scanProfile, top];
  for (const c of candidates) {
    if (
      isRecord(c) &&
      (typeof c._id === 'string' || typeof c.id === 'string' || typeof c.name === 'string')
    ) {
      const id = typeof c._id === 'string' ? c._id : typeof c.id === 'string' ? c.id : undefined;
      // A create may answer only the id: keep what was sent, so callers still see the whole profile.
      return {
        ...(fallback ?? {}),
        ...c,
        ...(id === undefined ? {} : { _id: id }),
      } as unknown as ScanProfile;
    }
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

/** GET /scanProfiles/{id}. 400/404 become ApiError with the service's message. */
export async function getScanProfile(client: HttpClient, id: string): Promise<ScanProfile> {
  const path = `/scanProfiles/${encodeURIComponent(id)}`;
  const body = await client.request<unknown>({ method: 'GET', path, retry: 'safe' });
  return readProfile(body, path);
}
