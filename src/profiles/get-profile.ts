/** The `profiles get` workflow: one scan profile of an environment. */
import type { ClientFactory, EnvironmentResolver } from '../api/client-factory.js';
import { getScanProfile } from '../api/scan-profiles.js';
import { ApiError } from '../errors.js';
import type { ScanProfile } from '../model/scan-profile.js';

/** The outside world of {@link getProfile}. */
export interface GetProfilePorts {
  readonly resolveEnvironment: EnvironmentResolver;
  readonly createClient: ClientFactory;
}

/** Read the profile `id`; a malformed or unknown id is an ApiError (exit 1) that says what to check. */
export async function getProfile(id: string, ports: GetProfilePorts): Promise<ScanProfile> {
  const environment = await ports.resolveEnvironment();
  const client = ports.createClient(environment);
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
  } finally {
    client.close();
  }
}
