import { type EnvironmentPorts, withClient } from '../api/client-factory.js';
import { listConnectionKeys } from '../api/connections.js';
import { createScanProfile } from '../api/scan-profiles.js';
import type { ConnectionKey } from '../api/types.js';
import { PreflightError, type Problem } from '../errors.js';
import type { ScanProfile } from '../model/scan-profile.js';
import { assertWriteConfirmed } from '../protected.js';
import { stripProfileServerFields } from './server-fields.js';
import { readProfileFile } from './validate-profile.js';

/** The `dataSourceList` entries that are neither an `_id` nor a `name` of `connections`, with their index. */
export function findMissingDataSources(
  dataSourceList: readonly string[],
  connections: readonly ConnectionKey[],
): { readonly index: number; readonly ref: string }[] {
  const known = new Set<string>();
  for (const c of connections) {
    known.add(c.name);
    if (c._id !== undefined) known.add(c._id);
  }
  return dataSourceList.flatMap((ref, index) => (known.has(ref) ? [] : [{ index, ref }]));
}

/** Refuse a one-time profile without `--allow-run` (exit 3): creating it starts a scan at once. */
function assertRunAllowed(document: Readonly<Record<string, unknown>>, allowRun: boolean): void {
  if (allowRun || document.isSingleRunScan !== true) return;
  const name = String(document.name);
  throw new PreflightError(
    `'${name}' is a one-time profile (isSingleRunScan: true): creating it starts a scan at once; nothing was sent`,
    [{ entry: name, path: '/isSingleRunScan', message: 'starts a scan at once' }],
    { hint: 'Pass --allow-run to create it and start the scan' },
  );
}

/** `profiles create`: the created profile, and whether it is one-time (its scan has started). */
export async function createProfileFromFile(
  options: { readonly file: string; readonly allowRun: boolean; readonly confirm: string | undefined },
  ports: EnvironmentPorts,
): Promise<{ readonly created: ScanProfile; readonly oneTime: boolean }> {
  const document = await readProfileFile(options.file);
  // Refused before the environment is even opened: nothing is sent for a one-time profile without allowRun.
  assertRunAllowed(document, options.allowRun);
  return withClient(ports, async (client) => {
    assertWriteConfirmed(client.environment, options.confirm);
    // Server fields dropped: a file made by `profiles get` works.
    const body = stripProfileServerFields(document);
    const name = String(body.name);
    const connections = await listConnectionKeys(client, ports.signal);
    const missing = findMissingDataSources(body.dataSourceList as string[], connections);
    if (missing.length > 0) {
      const problems: Problem[] = missing.map((m) => ({
        entry: name,
        path: `/dataSourceList/${m.index}`,
        message: `data source '${m.ref}' is not in ${client.environment.label} (by _id or name)`,
      }));
      throw new PreflightError(
        `${missing.length} data source(s) of '${name}' not found in ${client.environment.label}: ${missing.map((m) => m.ref).join(', ')}; nothing was created`,
        problems,
        {
          hint: 'Import those connections first (dds-migrate import ... --only NAME,..) or fix dataSourceList',
        },
      );
    }
    // One POST, never retried: it creates, and may start a scan.
    const created = await createScanProfile(client, body);
    return { created, oneTime: document.isSingleRunScan === true };
  });
}
