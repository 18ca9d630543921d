/** One run's environments, the workflows' ports: HTTP clients share its logger, Ctrl-C and retry budget. */
import type { ClientOptions } from '../api/client-factory.js';
import { createHttpClient, type HttpClient } from '../api/http.js';
import { createRetryBudget, DEFAULT_RETRY_BUDGET, type RetryBudget } from '../api/retry-policy.js';
import {
  type Config,
  loadConfig,
  type ProcessIo,
  type ResolvedEnvironment,
  type ResolveOptions,
  resolveEnvironment,
} from '../config.js';
import type { Logger } from '../log.js';

/** One side a command names: a config name or a base URL, and how to resolve it. */
export interface EnvironmentRequest extends ResolveOptions {
  readonly ref: string;
}

/** What {@link openRunEnvironments} needs from the run. */
export interface RunEnvironmentsOptions {
  /** `--config` as given. */
  readonly configPath: string | undefined;
  readonly io: ProcessIo;
  readonly log: Logger;
  readonly signal: AbortSignal;
}

export interface RunEnvironments {
  readonly retryBudget: RetryBudget;
  /** Read on the first call only. */
  config(): Promise<Config>;
  resolve(request: EnvironmentRequest): Promise<ResolvedEnvironment>;
  /** The caller closes it. */
  createClient(environment: ResolvedEnvironment, options?: ClientOptions): HttpClient;
}

/** The environments of a run; nothing is read until a function is called. */
export function openRunEnvironments(options: RunEnvironmentsOptions): RunEnvironments {
  const retryBudget = createRetryBudget(DEFAULT_RETRY_BUDGET);
  let config: Promise<Config> | undefined;
  const readConfig = (): Promise<Config> => {
    config ??= loadConfig(options.configPath, options.io);
    return config;
  };
  return {
    retryBudget,
    config: readConfig,
    async resolve(request) {
      return resolveEnvironment(request.ref, await readConfig(), options.io, request);
    },
    createClient(environment, clientOptions = {}) {
      return createHttpClient(environment, {
        log: options.log,
        signal: options.signal,
        ...clientOptions,
        retryBudget: clientOptions.retryBudget ?? retryBudget,
      });
    },
  };
}
