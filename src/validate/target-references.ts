/**
 * What an environment holds of the objects connections refer to (`validate --templates-from E`,
 * `import`): its scanner groups (GET scanner-status) and stored credentials (GET credentials). A look-up
 * answering 404 leaves that kind `not-available` (unchecked), never an error.
 */
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

/** GET scanner-status and GET credentials of the environment: what it holds, or that it cannot be asked. */
export async function fetchTargetReferences(
  client: HttpClient,
  signal: AbortSignal,
): Promise<TargetReferences> {
  // Both asked at once (each waits on the service); a failure of one ends the read.
  const [scanners, credentials] = await Promise.all([
    listScanners(client, { signal }),
    listCredentials(client, { signal }),
  ]);
  return {
    scannerGroups: namesOf(scanners, (s) => s.scanner_group),
    credentials: namesOf(credentials, (c) => c.credential_id),
  };
}
