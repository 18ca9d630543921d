import { type EnvironmentPorts, withClient } from '../api/client-factory.js';
import { getScanProfile, listScanProfiles } from '../api/scan-profiles.js';
import { ApiError } from '../errors.js';
import type { ScanProfile } from '../model/scan-profile.js';

/** `profiles get`: a malformed or unknown id is an ApiError (exit 1) that says what to check. */
export function getProfile(id: string, ports: EnvironmentPorts): Promise<ScanProfile> {
  return withClient(ports, async (client) => {
    try {
      return await getScanProfile(client, id);
    } catch (error) {
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

/** `profiles list` into `sink`, in the service's order (one request: the service does not page it). */
export function listEnvironmentProfiles(
  ports: EnvironmentPorts,
  sink: (profile: ScanProfile) => void,
): Promise<{ readonly environment: string }> {
  return withClient(ports, async (client, environment) => {
    for (const profile of await listScanProfiles(client, { signal: ports.signal })) sink(profile);
    return { environment: environment.label };
  });
}
