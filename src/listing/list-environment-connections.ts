/**
 * The `connections list` workflow: every connection of an environment, all pages, secret fields masked
 * (the service masks them already; this is the floor under it), handed one at a time to a sink that
 * renders them.
 */
import type { ClientFactory, EnvironmentResolver } from '../api/client-factory.js';
import { listConnections } from '../api/connections.js';
import type { ListOptions } from '../api/types.js';
import type { Connection } from '../model/connection.js';
import { maskSecrets } from '../secrets.js';

/** The outside world of {@link listEnvironmentConnections}. */
export interface ListConnectionsPorts {
  readonly resolveEnvironment: EnvironmentResolver;
  readonly createClient: ClientFactory;
}

/** What a listing did. */
export interface ListConnectionsResult {
  /** The environment's label. */
  readonly environment: string;
}

/** List the environment's connections (with `options`: filter, sort, signal) into `sink`, in order. */
export async function listEnvironmentConnections(
  options: ListOptions,
  ports: ListConnectionsPorts,
  sink: (connection: Connection) => void,
): Promise<ListConnectionsResult> {
  const environment = await ports.resolveEnvironment();
  const client = ports.createClient(environment);
  try {
    for await (const connection of listConnections(client, options)) sink(maskSecrets(connection));
    return { environment: environment.label };
  } finally {
    client.close();
  }
}
