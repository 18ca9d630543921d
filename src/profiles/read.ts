/**
 * The `profiles get` and `profiles list` workflows: one scan profile of an environment, or every one
 * (`GET /scanProfiles`, one request: the service does not page it), handed one at a time to a sink.
 */
import { type EnvironmentPorts, withClient } from '../api/client-factory.js';
import { getScanProfile, listScanProfiles } from '../api/scan-profiles.js';
import { ApiError } from '../errors.js';
import type { ScanProfile } from '../model/scan-profile.js';

/** Read the profile `id`; a malformed or unknown id is an ApiError (exit 1) that says what to check. */
export function getProfile(id: string, ports: EnvironmentPorts): Promise<ScanProfile> {
  return withClient(ports, async (client) => {
    try {
      return await getScanProfile(client, id);
    } catch (error) {
      // 400 (malformed id) and 404 (unknown id) stay exit 1 with the service's words, plus what to do.
      if (error instanceof ApiError && (error.status === 400 || error.status === 404)) {
        throw new ApiError(error.http, {
          hint: `Check the profile id ${id} and the environment (--env)`,
          cause: error,
        });
      }
      throw error;
    }
  });
}

/** List the environment's scan profiles into `sink`, in the service's order; resolves to the environment's label. */
export function listEnvironmentProfiles(
  ports: EnvironmentPorts,
  sink: (profile: ScanProfile) => void,
): Promise<{ readonly environment: string }> {
  return withClient(ports, async (client, environment) => {
    for (const profile of await listScanProfiles(client, { signal: ports.signal })) sink(profile);
    return { environment: environment.label };
  });
}
