/**
 * The `connections list` workflow: every connection of an environment, all pages, secret fields masked
 * (the service masks them already; this is the floor under it), handed one at a time to a sink that
 * renders them.
 */
import { type EnvironmentPorts, withClient } from '../api/client-factory.js';
import { listConnections } from '../api/connections.js';
import type { ListOptions } from '../api/types.js';
import type { Connection } from '../model/connection.js';
import { maskSecrets } from '../secrets.js';

/** List the environment's connections (with `options`: filter, sort, signal) into `sink`, in order; resolves to its label. */
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
