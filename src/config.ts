/** The config file, environments, tokens and the https rule (contract section 1, docs/configuration.md). */
import { access, readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { ConfigError } from './errors.js';
import { withoutBom } from './files.js';
import { schemasDir } from './paths.js';
import { compileSchemaFile, type SchemaCheck } from './schema/ajv.js';
import { describeJsonError, registerSecret } from './secrets.js';

/** What config resolution reads of the process. */
export interface ProcessIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

export interface EnvironmentConfig {
  readonly url: string;
  readonly tokenEnv?: string;
  readonly refreshTokenEnv?: string;
  readonly authScheme?: 'bearer' | 'raw';
  readonly concurrency?: number;
  readonly rate?: number;
  readonly protected?: boolean;
  readonly caFile?: string;
  readonly description?: string;
}

/** The config file (`schemas/config.schema.json`). */
export interface Config {
  readonly environments: Readonly<Record<string, EnvironmentConfig>>;
  readonly diff?: { readonly ignoreFields?: readonly string[] };
  /** Undefined when no file exists (only bare URLs work then). */
  readonly path: string | undefined;
}

/** Which side of a command an environment is on; decides the token variable for a bare URL. */
export type EnvironmentRole = 'source' | 'target' | 'single';

/** An environment ready to be talked to. Never printed whole: it holds a token. */
export interface ResolvedEnvironment {
  /** Undefined for a bare URL. */
  readonly name: string | undefined;
  /** The config name, else the host. */
  readonly label: string;
  /** Without `/api/v1` and a trailing slash. */
  readonly url: string;
  /** Undefined when only a refresh token is configured. */
  readonly token: string | undefined;
  /** The user token exchanged through GET /refresh-access-token. */
  readonly refreshToken: string | undefined;
  readonly authScheme: 'bearer' | 'raw';
  readonly concurrency: number | undefined;
  readonly rate: number | undefined;
  readonly protected: boolean;
  readonly caFile: string | undefined;
  /** Plain http to a non-loopback host, allowed by `--insecure-http` (warn the user). */
  readonly insecureHttp: boolean;
  /** Where the token was read (`DDS_PROD_TOKEN (tokenEnv of prod)`), for the hint of a 401. */
  readonly tokenSource?: string;
  /** Where the user token was read, for the hint of a refused exchange. */
  readonly refreshTokenSource?: string;
}

/** Command-line options that affect resolution; files relative to the working directory. */
export interface ResolveOptions {
  readonly role: EnvironmentRole;
  readonly tokenFile?: string;
  readonly insecureHttp?: boolean;
  readonly caFile?: string;
}

const DEFAULT_CONFIG_FILE = 'dds-migrate.config.json';

/** The token variables of a bare URL, by role (first found wins). */
export const TOKEN_VARIABLES: Readonly<Record<EnvironmentRole, readonly string[]>> = {
  source: ['DDS_SOURCE_TOKEN', 'DDS_TOKEN'],
  target: ['DDS_TARGET_TOKEN', 'DDS_TOKEN'],
  single: ['DDS_TOKEN'],
};

let configCheck: Promise<SchemaCheck> | undefined;

function checkConfigSchema(): Promise<SchemaCheck> {
  configCheck ??= compileSchemaFile(join(schemasDir(), 'config.schema.json'));
  return configCheck;
}

function displayPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

/** Read the config file named by `--config`, `$DDS_MIGRATE_CONFIG`, or `./dds-migrate.config.json`. */
export async function loadConfig(explicitPath: string | undefined, io: ProcessIo): Promise<Config> {
  const named = explicitPath ?? io.env.DDS_MIGRATE_CONFIG;
  const path = resolve(io.cwd, named ?? DEFAULT_CONFIG_FILE);
  const shown = displayPath(path, io.cwd);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'ENOENT' && named === undefined) return { environments: {}, path: undefined };
    throw new ConfigError(`Cannot read the config file ${shown}${code ? ` (${code})` : ''}`, {
      hint: 'Check --config / $DDS_MIGRATE_CONFIG',
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(withoutBom(text)) as unknown;
  } catch (error) {
    // Never the parser's excerpt: a token pasted in the wrong place would be quoted.
    throw new ConfigError(`${shown}: not valid JSON (${describeJsonError(error)})`, {
      hint: 'Fix the config file',
    });
  }
  const issues = (await checkConfigSchema())(value);
  if (issues.length > 0) {
    const listed = issues.map((issue) => `${issue.path || '/'} ${issue.message}`);
    const what = listed.length === 1 ? listed[0] : `${listed.length} problems: ${listed.join('; ')}`;
    throw new ConfigError(`${shown}: ${what}`, {
      hint: 'Fix the config file (see schemas/config.schema.json)',
    });
  }
  const config = value as { environments: Record<string, EnvironmentConfig>; diff?: Config['diff'] };
  const environments: Record<string, EnvironmentConfig> = {};
  for (const [name, env] of Object.entries(config.environments)) {
    environments[name] = env.caFile ? { ...env, caFile: resolve(dirname(path), env.caFile) } : env;
  }
  return { environments, ...(config.diff ? { diff: config.diff } : {}), path };
}

/** True when `ref` is written as a URL rather than an environment name. */
export function isUrlReference(ref: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(ref.trim());
}

/** True for hosts that never leave the machine (plain http is allowed to them). */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Normalise a base URL: `https://host[:port]`, then optionally `/` or `/api/v1`; `what` names its source. */
export function normalizeBaseUrl(raw: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new ConfigError(`${what}: '${hideUserInfo(raw)}' is not a URL`, {
      hint: 'Use a base URL such as https://host[:port]',
    });
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new ConfigError(`${what}: expected an https:// URL, got ${url.protocol}//`, {
      hint: 'Use a base URL such as https://host[:port]',
    });
  }
  if (url.username || url.password) {
    throw new ConfigError(`${what}: a URL must not carry credentials`, {
      hint: 'Remove user:password@ and give the token through tokenEnv or --token-file',
    });
  }
  const path = url.pathname.replace(/\/+$/, '');
  if ((path !== '' && path !== '/api/v1') || url.search || url.hash) {
    throw new ConfigError(
      `${what}: expected a base URL such as https://host[:port], got one with a path or query`,
      {
        hint: 'Give the base URL only; dds-migrate adds /api/v1 itself',
      },
    );
  }
  return url;
}

/** `scheme://user:password@rest` -> `scheme://***@rest` (credentials in a URL are never echoed). */
function hideUserInfo(raw: string): string {
  return raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1***@');
}

async function readTokenFile(file: string, io: Pick<ProcessIo, 'cwd'>): Promise<string> {
  const path = resolve(io.cwd, file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new ConfigError(`Cannot read the token file ${file}${code ? ` (${code})` : ''}`, {
      hint: 'Check the --token-file path',
    });
  }
  return checkToken(text.trim(), `the token file ${file}`);
}

/** A token must be one printable line: anything else would corrupt the Authorization header. */
function checkToken(token: string, source: string): string {
  if (token === '') throw new ConfigError(`${source} is empty`, { hint: 'Put the API token there' });
  if (/[\s\u0000-\u001f\u007f]/.test(token)) {
    throw new ConfigError(`${source} holds a value with spaces or control characters, not a token`, {
      hint: 'Put only the API token there',
    });
  }
  registerSecret(token);
  return token;
}

function readTokenVariable(name: string, io: Pick<ProcessIo, 'env'>, envLabel: string): string {
  const value = io.env[name];
  if (value === undefined) {
    throw new ConfigError(`The environment variable ${name} (token of ${envLabel}) is not set`, {
      hint: `Export ${name} with the API token`,
    });
  }
  return checkToken(value.trim(), `The environment variable ${name}`);
}

function readRoleToken(
  role: EnvironmentRole,
  io: Pick<ProcessIo, 'env'>,
  envLabel: string,
  flag: string,
): { token: string; variable: string } {
  const names = TOKEN_VARIABLES[role];
  for (const name of names) {
    if (io.env[name] !== undefined) return { token: readTokenVariable(name, io, envLabel), variable: name };
  }
  throw new ConfigError(`No token for ${envLabel}: set ${names.join(' or ')}, or pass ${flag}`, {
    hint: 'A token is never taken as a command-line value',
  });
}

function tokenFileFlag(role: EnvironmentRole): string {
  return role === 'source' ? '--from-token-file' : role === 'target' ? '--to-token-file' : '--token-file';
}

/** Turn `--env`/`--from`/`--to` (a config name or a base URL) into a {@link ResolvedEnvironment}. */
export async function resolveEnvironment(
  ref: string,
  config: Config,
  io: ProcessIo,
  options: ResolveOptions,
): Promise<ResolvedEnvironment> {
  const trimmed = ref.trim();
  const flag = tokenFileFlag(options.role);
  let name: string | undefined;
  let entry: EnvironmentConfig | undefined;
  let url: URL;
  if (isUrlReference(trimmed)) {
    url = normalizeBaseUrl(trimmed, `'${hideUserInfo(trimmed)}'`);
  } else {
    entry = Object.hasOwn(config.environments, trimmed) ? config.environments[trimmed] : undefined;
    if (!entry) {
      const known = Object.keys(config.environments).sort();
      const where = config.path ? ` in ${displayPath(config.path, io.cwd)}` : ' (no config file found)';
      throw new ConfigError(
        `Unknown environment '${trimmed}'${where}${known.length > 0 ? `; known: ${known.join(', ')}` : ''}`,
        { hint: 'Give a name from the config file or a base URL such as https://host[:port]' },
      );
    }
    name = trimmed;
    url = normalizeBaseUrl(entry.url, `environment '${name}' (url)`);
  }
  const label = name ?? url.host;

  let insecureHttp = false;
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
    if (!options.insecureHttp) {
      throw new ConfigError(`${label}: plain http to ${url.host} would send the token unencrypted`, {
        hint: 'Use https, or pass --insecure-http if you really mean it',
      });
    }
    insecureHttp = true;
  }

  let token: string | undefined;
  let refreshToken: string | undefined;
  let tokenSource: string | undefined;
  if (options.tokenFile) {
    token = await readTokenFile(options.tokenFile, io);
    tokenSource = `the file of ${flag}`;
  } else if (entry?.tokenEnv) {
    token = readTokenVariable(entry.tokenEnv, io, label);
    tokenSource = `${entry.tokenEnv} (tokenEnv of ${label})`;
  }
  let refreshTokenSource: string | undefined;
  if (entry?.refreshTokenEnv) {
    refreshToken = readTokenVariable(entry.refreshTokenEnv, io, label);
    refreshTokenSource = `${entry.refreshTokenEnv} (refreshTokenEnv of ${label})`;
    tokenSource ??= refreshTokenSource;
  }
  if (token === undefined && refreshToken === undefined) {
    const role = readRoleToken(options.role, io, label, flag);
    token = role.token;
    tokenSource = role.variable;
  }

  const caFile = options.caFile ? resolve(io.cwd, options.caFile) : entry?.caFile;
  if (caFile) {
    const what = options.caFile ? '--ca-file' : `caFile of ${label}`;
    await access(caFile).catch(() => {
      throw new ConfigError(`Cannot read the CA file ${caFile} (${what})`, {
        hint: 'Check the path of the CA file',
      });
    });
  }

  return {
    name,
    label,
    url: url.origin,
    token,
    refreshToken,
    authScheme: entry?.authScheme ?? 'bearer',
    concurrency: entry?.concurrency,
    rate: entry?.rate,
    protected: entry?.protected ?? false,
    caFile,
    insecureHttp,
    ...(tokenSource === undefined ? {} : { tokenSource }),
    ...(refreshTokenSource === undefined ? {} : { refreshTokenSource }),
  };
}
