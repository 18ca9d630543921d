/**
 * The `profiles list` workflow: every scan profile of an environment (`GET /scanProfiles`, one
 * request: the service does not page it), handed one at a time to a sink that renders them.
 */
import type { ClientFactory, EnvironmentResolver } from '../api/client-factory.js';
import { listScanProfiles } from '../api/scan-profiles.js';
import type { ScanProfile } from '../model/scan-profile.js';

/** The outside world of {@link listEnvironmentProfiles}. */
export interface ListProfilesPorts {
  readonly resolveEnvironment: EnvironmentResolver;
  readonly createClient: ClientFactory;
  readonly signal: AbortSignal;
}

/** List the environment's scan profiles into `sink`, in the service's order; resolves to the environment's label. */
export async function listEnvironmentProfiles(
  ports: ListProfilesPorts,
  sink: (profile: ScanProfile) => void,
): Promise<{ readonly environment: string }> {
  const environment = await ports.resolveEnvironment();
  const client = ports.createClient(environment);
  try {
    for (const profile of await listScanProfiles(client, { signal: ports.signal })) sink(profile);
    return { environment: environment.label };
  } finally {
    client.close();
  }
}
