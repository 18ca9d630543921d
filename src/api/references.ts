/**
 * Scanners (by `scanner_group`) and stored credentials (by `credential_id`) referred to. Both endpoints are
 * optional (api-notes: scanner status [code], credentials [guess]): a 404 is `not-available`, no error.
 */
import { maskSecrets } from '../secrets.js';
import type { HttpClient } from './http.js';
import { requestOrAbsent } from './http-options.js';
import { readListPage } from './paging.js';

/** A scanner as listed by GET /scanner-status (other fields kept as they came). */
export interface ScannerEntry extends Readonly<Record<string, unknown>> {
  readonly scanner_group?: string;
}

/** A stored credential as listed by GET /credentials (fields named like secrets are masked). */
export interface CredentialEntry extends Readonly<Record<string, unknown>> {
  readonly credential_id?: string;
}

/** A reference list, or the service does not offer it (404). */
export type ReferenceList<T> =
  | { readonly kind: 'available'; readonly items: readonly T[] }
  | { readonly kind: 'not-available' };

async function listReference<T>(
  client: HttpClient,
  path: string,
  key: string,
  signal: AbortSignal | undefined,
): Promise<ReferenceList<T>> {
  const answer = await requestOrAbsent(client, { method: 'GET', path, retry: 'safe', signal });
  if (answer.kind === 'absent') return { kind: 'not-available' };
  return { kind: 'available', items: readListPage(answer.value, key, path, false).items as unknown as T[] };
}

/** GET /scanner-status: the scanners with their `scanner_group`; `not-available` on 404. */
export function listScanners(
  client: HttpClient,
  options: { readonly signal?: AbortSignal } = {},
): Promise<ReferenceList<ScannerEntry>> {
  return listReference<ScannerEntry>(client, '/scanner-status', 'scanners', options.signal);
}

/** GET /credentials: the stored credentials by `credential_id`; `not-available` on 404. */
export function listCredentials(
  client: HttpClient,
  options: { readonly signal?: AbortSignal } = {},
): Promise<ReferenceList<CredentialEntry>> {
  return listReference<CredentialEntry>(client, '/credentials', 'credentials', options.signal).then((list) =>
    // A credential listing may carry the values: masked here, so none reaches a report or a log.
    list.kind === 'available'
      ? { kind: 'available', items: list.items.map((item) => maskSecrets(item) as CredentialEntry) }
      : list,
  );
}
