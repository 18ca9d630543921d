import type { HttpClient } from '../api/http.js';
import { listCredentials, listScanners, type ReferenceList } from '../api/references.js';
import type { TargetNames, TargetReferences } from '../connections/references.js';

function namesOf<T>(list: ReferenceList<T>, read: (item: T) => unknown): TargetNames {
  if (list.kind === 'not-available') return list;
  const names = new Set<string>();
  for (const item of list.items) {
    const name = read(item);
    if (typeof name === 'string' && name !== '') names.add(name);
  }
  return { kind: 'available', names };
}

/**
 * The scanner groups (GET scanner-status) and stored credentials (GET credentials) of an environment;
 * a look-up answering 404 leaves that kind `not-available` (unchecked), never an error.
 */
export async function fetchTargetReferences(
  client: HttpClient,
  signal: AbortSignal,
): Promise<TargetReferences> {
  const [scanners, credentials] = await Promise.all([
    listScanners(client, { signal }),
    listCredentials(client, { signal }),
  ]);
  return {
    scannerGroups: namesOf(scanners, (s) => s.scanner_group),
    credentials: namesOf(credentials, (c) => c.credential_id),
  };
}
