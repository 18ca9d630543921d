/** The `connections list` workflow: secrets masked again (the floor under the service's masking). */
import { type EnvironmentPorts, withClient } from '../api/client-factory.js';
import { listConnections } from '../api/connections.js';
import type { ListOptions } from '../api/types.js';
import type { Connection } from '../model/connection.js';
import { maskSecrets } from '../secrets.js';

/** Every connection of the environment into `sink`, in order; resolves to the environment's label. */
export function listEnvironmentConnections(
  options: ListOptions,
  ports: EnvironmentPorts,
  sink: (connection: Connection) => void,
): Promise<{ readonly environment: string }> {
  return withClient(ports, async (client, environment) => {
    for await (const connection of listConnections(client, options)) sink(maskSecrets(connection));
    return { environment: environment.label };
  });
}
