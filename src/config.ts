/**
 * Configuration: the config file, environment resolution, token sources and the https rule
 * (contract section 1). STUB: signatures fixed, bodies being written (issue #2).
 */
import type { CliIo } from './cli/context.js';

/** One environment of the config file. */
export interface EnvironmentConfig {
  readonly url: string;
  readonly tokenEnv?: string;
  readonly refreshTokenEnv?: string;
  readonly authScheme?: 'bearer' | 'raw';
  readonly concurrency?: number;
  readonly rate?: number;
  readonly protected?: boolean;
  readonly caFile?: string;
}

/** The config file (`schemas/config.schema.json`). */
export interface Config {
  readonly environments: Readonly<Record<string, EnvironmentConfig>>;
  /** Fields (names or JSON pointers) that `diff` ignores everywhere. */
  readonly diff?: { readonly ignoreFields?: readonly string[] };
  /** Where it was read from; undefined when no file exists (only bare URLs work then). */
  readonly path: string | undefined;
}

/** Which side of a command an environment is on; decides the token variable for a bare URL. */
export type EnvironmentRole = 'source' | 'target' | 'single';

/** An environment ready to be talked to. Never printed whole: it holds a token. */
export interface ResolvedEnvironment {
  /** Name in the config file; undefined for a bare URL. */
  readonly name: string | undefined;
  /** For messages: the config name, else the host. */
  readonly label: string;
  /** Base URL without `/api/v1` and without a trailing slash. */
  readonly url: string;
  /** API key or session token (undefined when only a refresh token is configured). */
  readonly token: string | undefined;
  /** Long-lived user token exchanged through GET /refresh-access-token. */
  readonly refreshToken: string | undefined;
  readonly authScheme: 'bearer' | 'raw';
  readonly concurrency: number | undefined;
  readonly rate: number | undefined;
  readonly protected: boolean;
  readonly caFile: string | undefined;
  readonly insecureHttp: boolean;
}

/** Options given on the command line that affect resolution. */
export interface ResolveOptions {
  readonly role: EnvironmentRole;
  /** `--token-file`, `--from-token-file`, `--to-token-file`. */
  readonly tokenFile?: string;
  readonly insecureHttp?: boolean;
  readonly caFile?: string;
}

/** Read the config file named by `--config`, `$DDS_MIGRATE_CONFIG`, or `./dds-migrate.config.json`. */
export declare function loadConfig(explicitPath: string | undefined, io: Pick<CliIo, 'env' | 'cwd'>): Promise<Config>;

/** Turn `--env`/`--from`/`--to` (a config name or a base URL) into a {@link ResolvedEnvironment}. */
export declare function resolveEnvironment(
  ref: string,
  config: Config,
  io: Pick<CliIo, 'env' | 'cwd'>,
  options: ResolveOptions,
): Promise<ResolvedEnvironment>;
