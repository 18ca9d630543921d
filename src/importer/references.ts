/**
 * The references step of the import (the checks themselves are pure, in src/connections/references.ts):
 * ask the target which scanner groups and stored credentials it holds (a look-up answering 404 leaves
 * that kind unchecked), and word the warnings of the entries a run would send.
 */
import type { HttpClient } from '../api/http.js';
import { listCredentials, listScanners } from '../api/references.js';
import {
  describeReferenceWarnings,
  describeSourceIdDrops,
  type ReferencingEntry,
  type SourceIdChange,
  summarizeReferences,
  type TargetNames,
  type TargetReferences,
} from '../connections/references.js';

function namesOf<T>(
  list: Awaited<ReturnType<typeof listScanners>> | Awaited<ReturnType<typeof listCredentials>>,
  read: (item: T) => unknown,
): TargetNames {
  if (list.kind === 'not-available') return list;
  const names = new Set<string>();
  for (const item of list.items) {
    const name = read(item as T);
    if (typeof name === 'string' && name !== '') names.add(name);
  }
  return { kind: 'available', names };
}

/** GET scanner-status and GET credentials of the target: what it holds, or that it cannot be asked. */
export async function fetchTargetReferences(
  client: HttpClient,
  signal: AbortSignal,
): Promise<TargetReferences> {
  const scanners = await listScanners(client, { signal });
  const credentials = await listCredentials(client, { signal });
  return {
    scannerGroups: namesOf<{ scanner_group?: unknown }>(scanners, (s) => s.scanner_group),
    credentials: namesOf<{ credential_id?: unknown }>(credentials, (c) => c.credential_id),
  };
}

/**
 * The warnings of the entries a run sends: kinds the target could not list, certificates (never
 * checkable), and source-environment ids dropped.
 */
export function describeImportReferenceWarnings(
  sent: readonly ReferencingEntry[],
  target: TargetReferences,
  sourceIdChanges: ReadonlyMap<string, readonly SourceIdChange[]>,
): string[] {
  const names = new Set(sent.map((e) => e.name));
  const drops = new Map([...sourceIdChanges].filter(([name]) => names.has(name)));
  return [...describeReferenceWarnings(summarizeReferences(sent), target), ...describeSourceIdDrops(drops)];
}
