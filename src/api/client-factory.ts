/** The port through which a workflow gets HTTP clients: the CLI hands the real factory, tests fakes. */
import type { ResolvedEnvironment } from '../config.js';
import type { HttpClient } from './http.js';
import type { RetryBudget } from './retry-policy.js';

export interface ClientOptions {
  /** The retry budget to draw on; default the run's shared budget. */
  readonly retryBudget?: RetryBudget;
  /** Called on every 429 (the import's throttle slows down). */
  readonly onRateLimited?: (retryAfterMs: number | undefined) => void;
  readonly timeoutMs?: number;
}

/** Creates the HTTP client of a resolved environment; the caller closes it. */
export type ClientFactory = (environment: ResolvedEnvironment, options?: ClientOptions) => HttpClient;

/** Resolves an environment (config file, token); a workflow calls it when the contract says it happens. */
export type EnvironmentResolver = () => Promise<ResolvedEnvironment>;

/** What a workflow on one environment is handed: how to resolve it, how to create its client, Ctrl-C. */
export interface EnvironmentPorts {
  readonly resolveEnvironment: EnvironmentResolver;
  readonly createClient: ClientFactory;
  readonly signal?: AbortSignal;
}

/** Resolve the environment of `ports`, run `work` with its client, then close the client. */
export async function withClient<T>(
  ports: EnvironmentPorts,
  work: (client: HttpClient, environment: ResolvedEnvironment) => Promise<T>,
): Promise<T> {
  const environment = await ports.resolveEnvironment();
  const client = ports.createClient(environment);
  try {
    return await work(client, environment);
  } finally {
    client.close();
  }
}
