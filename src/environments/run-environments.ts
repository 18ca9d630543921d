/**
 * The environments of one run, as the commands open them: the config file read once, `--env`/`--from`/
 * `--to` resolved (token variables or files read, `caFile` checked), and HTTP clients created with the
 * run's logger, Ctrl-C signal and one retry budget shared by every client of the run. The CLI builds
 * one per run ({@link openRunEnvironments}) and hands its functions to the workflows as their ports
 * (`EnvironmentResolver`, `ClientFactory`); the I/O happens here, below `cli/`.
 */
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

/** One side a command names, as read from its options: a config name or a base URL, and how to resolve it. */
export interface EnvironmentRequest extends ResolveOptions {
  readonly ref: string;
}

/** What {@link openRunEnvironments} needs from the run. */
export interface RunEnvironmentsOptions {
  /** `--config` as given (`$DDS_MIGRATE_CONFIG`, then the default file, otherwise). */
  readonly configPath: string | undefined;
  readonly io: ProcessIo;
  readonly log: Logger;
  /** Ctrl-C. */
  readonly signal: AbortSignal;
}

export interface RunEnvironments {
  /** The retry budget every client of the run shares unless given its own. */
  readonly retryBudget: RetryBudget;
  /** The config file, read on the first call only. */
  config(): Promise<Config>;
  /** Resolve one side (reads its token; checks its CA file). */
  resolve(request: EnvironmentRequest): Promise<ResolvedEnvironment>;
  /** The HTTP client of a resolved environment (the caller closes it); the run's budget unless given one. */
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
