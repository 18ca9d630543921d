import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type Config,
  isLoopbackHost,
  loadConfig,
  normalizeBaseUrl,
  resolveEnvironment,
} from '../../src/config.js';
import { ConfigError } from '../../src/errors.js';
import { loadOverrides } from '../../src/importer/overrides.js';
import { clearRegisteredSecrets, scrub } from '../../src/secrets.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let dir: string;

beforeEach(async () => {
  dir = await makeTempDir('dds-config-');
});

afterEach(async () => {
  clearRegisteredSecrets();
});

async function writeConfig(value: unknown, name = 'dds-migrate.config.json'): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, typeof value === 'string' ? value : JSON.stringify(value));
  return path;
}

async function errorOf(promise: Promise<unknown>): Promise<ConfigError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

const CONTRACT_EXAMPLE = {
  environments: {
    prod: { url: 'https://prod.example.com', tokenEnv: 'DDS_PROD_TOKEN' },
    staging: {
      url: 'https://staging.example.com',
      tokenEnv: 'DDS_STAGING_TOKEN',
      authScheme: 'raw',
      concurrency: 4,
      rate: 10,
      protected: true,
    },
  },
};

describe('loadConfig', () => {
  it('reads ./dds-migrate.config.json from the working directory (the contract example)', async () => {
    const path = await writeConfig(CONTRACT_EXAMPLE);
    const config = await loadConfig(undefined, { env: {}, cwd: dir });
    expect(config.path).toBe(path);
    expect(config.environments.staging?.authScheme).toBe('raw');
  });

  it('without a file and without --config, works with no environments', async () => {
    const config = await loadConfig(undefined, { env: {}, cwd: dir });
    expect(config).toEqual({ environments: {}, path: undefined });
  });

  it('a named file that is missing is an error', async () => {
    const error = await errorOf(loadConfig('missing.json', { env: {}, cwd: dir }));
    expect(error.message).toContain('missing.json');
    const fromEnv = await errorOf(
      loadConfig(undefined, { env: { DDS_MIGRATE_CONFIG: 'other.json' }, cwd: dir }),
    );
    expect(fromEnv.message).toContain('other.json');
  });

  it('a file that starts with a byte-order mark (a Windows editor) is read as JSON', async () => {
    const json = JSON.stringify({ environments: { a: { url: 'https://a.example.com' } } });
    await writeFile(join(dir, 'bom.json'), `\ufeff${json}`);
    const config = await loadConfig('bom.json', { env: {}, cwd: dir });
    expect(Object.keys(config.environments)).toEqual(['a']);
    const overrides = join(dir, 'bom-overrides.json');
    await writeFile(overrides, `\ufeff${JSON.stringify({ all: { description: 'd' } })}`);
    await expect(loadOverrides(overrides)).resolves.toMatchObject({ all: { description: 'd' } });
  });

  it('--config wins over $DDS_MIGRATE_CONFIG', async () => {
    await writeConfig({ environments: { a: { url: 'https://a.example.com' } } }, 'a.json');
    await writeConfig({ environments: { b: { url: 'https://b.example.com' } } }, 'b.json');
    const config = await loadConfig('a.json', { env: { DDS_MIGRATE_CONFIG: 'b.json' }, cwd: dir });
    expect(Object.keys(config.environments)).toEqual(['a']);
  });

  it('names the bad key of a schema violation', async () => {
    await writeConfig({ environments: { prod: { url: 'https://p.example.com', concurrency: 2.5 } } });
    const error = await errorOf(loadConfig(undefined, { env: {}, cwd: dir }));
    expect(error.message).toBe('dds-migrate.config.json: /environments/prod/concurrency must be integer');
  });

  it('refuses an unknown field, such as a token written into the file', async () => {
    await writeConfig({ environments: { prod: { url: 'https://p.example.com', token: 'abc' } } });
    const error = await errorOf(loadConfig(undefined, { env: {}, cwd: dir }));
    expect(error.message).toContain('/environments/prod/token is not an allowed field');
  });

  it('refuses a bad authScheme and a missing url', async () => {
    await writeConfig({ environments: { a: { url: 'https://a.example.com', authScheme: 'basic' }, b: {} } });
    const error = await errorOf(loadConfig(undefined, { env: {}, cwd: dir }));
    // Both problems, on one line, so that one edit fixes the file.
    expect(error.message).toMatch(/^dds-migrate.config.json: 2 problems: /);
    expect(error.message).toContain('/environments/a/authScheme must be one of "bearer", "raw"');
    expect(error.message).toContain('/environments/b/url is required');
    expect(error.message).not.toContain('\n');
  });

  it('refuses JSON that does not parse', async () => {
    await writeConfig('{ "environments": ');
    const error = await errorOf(loadConfig(undefined, { env: {}, cwd: dir }));
    expect(error.message).toMatch(/^dds-migrate.config.json: not valid JSON/);
  });
});

function config(environments: Config['environments'], path = '/x/dds-migrate.config.json'): Config {
  return { environments, path };
}

describe('resolveEnvironment', () => {
  it('resolves a config name with its token variable', async () => {
    const env = await resolveEnvironment(
      'staging',
      config(CONTRACT_EXAMPLE.environments as Config['environments']),
      { env: { DDS_STAGING_TOKEN: 'staging-secret-1' }, cwd: dir },
      { role: 'target' },
    );
    expect(env).toMatchObject({
      name: 'staging',
      label: 'staging',
      url: 'https://staging.example.com',
      token: 'staging-secret-1',
      authScheme: 'raw',
      concurrency: 4,
      rate: 10,
      protected: true,
    });
    // Registered: scrubbed from any text from now on.
    expect(scrub('token staging-secret-1 leaked')).toBe('token ****** leaked');
  });

  it('names a missing token variable, never a value', async () => {
    const error = await errorOf(
      resolveEnvironment(
        'prod',
        config(CONTRACT_EXAMPLE.environments as Config['environments']),
        { env: {}, cwd: dir },
        {
          role: 'single',
        },
      ),
    );
    expect(error.message).toContain('DDS_PROD_TOKEN');
  });

  it('lists the known names for an unknown environment', async () => {
    const error = await errorOf(
      resolveEnvironment(
        'prdo',
        config(CONTRACT_EXAMPLE.environments as Config['environments']),
        { env: {}, cwd: dir },
        {
          role: 'single',
        },
      ),
    );
    expect(error.message).toContain("Unknown environment 'prdo'");
    expect(error.message).toContain('known: prod, staging');
  });

  it.each([
    ['single', { DDS_TOKEN: 'tok-single' }, 'tok-single'],
    ['source', { DDS_SOURCE_TOKEN: 'tok-source', DDS_TOKEN: 'tok-any' }, 'tok-source'],
    ['target', { DDS_TARGET_TOKEN: 'tok-target', DDS_TOKEN: 'tok-any' }, 'tok-target'],
    ['target', { DDS_TOKEN: 'tok-any' }, 'tok-any'],
  ] as const)('a bare URL on the %s side reads its variable', async (role, vars, expected) => {
    const env = await resolveEnvironment(
      'https://dds.example.com:8443/',
      config({}),
      { env: vars, cwd: dir },
      { role },
    );
    expect(env.token).toBe(expected);
    expect(env.url).toBe('https://dds.example.com:8443');
    expect(env.label).toBe('dds.example.com:8443');
    expect(env.name).toBeUndefined();
    expect(env.authScheme).toBe('bearer');
  });

  it('a bare URL without a token names the variables to set', async () => {
    const error = await errorOf(
      resolveEnvironment('https://dds.example.com', config({}), { env: {}, cwd: dir }, { role: 'source' }),
    );
    expect(error.message).toContain('DDS_SOURCE_TOKEN or DDS_TOKEN');
    expect(error.message).toContain('--from-token-file');
  });

  it('reads a token file (trimmed), which wins over the variable', async () => {
    const file = join(dir, 'token.txt');
    await writeFile(file, 'file-token-xyz\n');
    const env = await resolveEnvironment(
      'https://dds.example.com',
      config({}),
      { env: { DDS_TOKEN: 'env-token' }, cwd: dir },
      { role: 'single', tokenFile: 'token.txt' },
    );
    expect(env.token).toBe('file-token-xyz');
  });

  it('refuses an empty token file and a missing one', async () => {
    await writeFile(join(dir, 'empty.txt'), '\n');
    const empty = await errorOf(
      resolveEnvironment(
        'https://d.example.com',
        config({}),
        { env: {}, cwd: dir },
        { role: 'single', tokenFile: 'empty.txt' },
      ),
    );
    expect(empty.message).toContain('is empty');
    const missing = await errorOf(
      resolveEnvironment(
        'https://d.example.com',
        config({}),
        { env: {}, cwd: dir },
        { role: 'single', tokenFile: 'nope.txt' },
      ),
    );
    expect(missing.message).toContain('nope.txt');
  });

  it('strips /api/v1 and refuses other paths, queries and credentials', async () => {
    expect(normalizeBaseUrl('https://h.example.com/api/v1/', 'x').origin).toBe('https://h.example.com');
    expect(() => normalizeBaseUrl('https://h.example.com/dds', 'x')).toThrow(ConfigError);
    expect(() => normalizeBaseUrl('https://h.example.com/?a=1', 'x')).toThrow(ConfigError);
    expect(() => normalizeBaseUrl('https://u:p@h.example.com', 'x')).toThrow(ConfigError);
    expect(() => normalizeBaseUrl('ftp://h.example.com', 'x')).toThrow(ConfigError);
  });

  it('requires https except for loopback hosts', async () => {
    const io = { env: { DDS_TOKEN: 'tok-http' }, cwd: dir };
    for (const url of ['http://127.0.0.1:8080', 'http://localhost:1', 'http://[::1]:9']) {
      const env = await resolveEnvironment(url, config({}), io, { role: 'single' });
      expect(env.insecureHttp).toBe(false);
    }
    const error = await errorOf(
      resolveEnvironment('http://dds.example.com', config({}), io, { role: 'single' }),
    );
    expect(error.message).toContain('plain http');
    expect(error.hint).toContain('--insecure-http');
    const allowed = await resolveEnvironment('http://dds.example.com', config({}), io, {
      role: 'single',
      insecureHttp: true,
    });
    expect(allowed.insecureHttp).toBe(true);
    expect(isLoopbackHost('127.1.2.3')).toBe(true);
    expect(isLoopbackHost('128.0.0.1')).toBe(false);
  });

  it('reads a refresh token from refreshTokenEnv, with or without a token', async () => {
    const env = await resolveEnvironment(
      'dr',
      config({ dr: { url: 'https://dr.example.com', refreshTokenEnv: 'DR_USER_TOKEN' } }),
      { env: { DR_USER_TOKEN: 'user-token-dr' }, cwd: dir },
      { role: 'target' },
    );
    expect(env.token).toBeUndefined();
    expect(env.refreshToken).toBe('user-token-dr');
    const missing = await errorOf(
      resolveEnvironment(
        'dr',
        config({ dr: { url: 'https://dr.example.com', refreshTokenEnv: 'DR_USER_TOKEN' } }),
        { env: {}, cwd: dir },
        { role: 'target' },
      ),
    );
    expect(missing.message).toContain('DR_USER_TOKEN');
  });

  it('checks that a CA file exists; --ca-file wins over caFile', async () => {
    const ca = join(dir, 'ca.pem');
    await writeFile(ca, '-----BEGIN CERTIFICATE-----\n');
    const io = { env: { T: 'tok-ca-1' }, cwd: dir };
    const cfg = config({
      e: { url: 'https://e.example.com', tokenEnv: 'T', caFile: join(dir, 'missing.pem') },
    });
    await errorOf(resolveEnvironment('e', cfg, io, { role: 'single' }));
    const env = await resolveEnvironment('e', cfg, io, { role: 'single', caFile: 'ca.pem' });
    expect(env.caFile).toBe(ca);
  });

  it('refuses a token with whitespace inside', async () => {
    const error = await errorOf(
      resolveEnvironment(
        'https://d.example.com',
        config({}),
        { env: { DDS_TOKEN: 'two words' }, cwd: dir },
        { role: 'single' },
      ),
    );
    expect(error.message).not.toContain('two words');
  });
});
