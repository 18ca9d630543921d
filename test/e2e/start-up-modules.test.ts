/**
 * `--version`, `--help` and `completion` load only what they print: no HTTP client, no schema compiler,
 * no snapshot code, no emulator, no logger, and no yargs (the help pages and completion scripts are laid
 * out by the build: test/e2e/laid-out-help.test.ts). The built CLI runs in a child process with a module loader
 * hook (`node --import`, `module.register`) that appends the URL of every module it loads to a file, and
 * at exit the files of every CommonJS module it required (`require` does not pass the hook: axios, pino
 * and the other packages loaded on first use are required), and Node's own modules (`process.moduleLoadList`,
 * as `node:<id>`); the test reads the list. A command that runs is the control: it lists the client it uses, so a hook
 * that saw nothing would fail the test instead of passing it.
 */
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuiltCliFresh, BUILT_CLI } from '../helpers/built-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const run = promisify(execFile);

/** The loader hook: every module's URL, one a line, appended to `$DDS_TEST_MODULE_LIST`. */
const HOOKS = `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(process.env.DDS_TEST_MODULE_LIST, url + '\\n');
  return next(url, context);
}
`;

/** What a start-up must not load: the client and its axios, ajv, snapshots, the emulator, pino, stream-json. */
const HEAVY = [
  /\/dist\/src\/api\//,
  /\/dist\/src\/schema\//,
  /\/dist\/src\/snapshot\//,
  /\/dist\/src\/emulator\//,
  /\/dist\/src\/log\.js$/,
  /\/node_modules\/(axios|ajv|ajv-formats|pino|stream-json)\//,
];

let dir: string;
let preload: string;

beforeAll(async () => {
  assertBuiltCliFresh();
  dir = await makeTempDir('dds-start-up-modules-');
  await writeFile(join(dir, 'hooks.mjs'), HOOKS);
  preload = join(dir, 'preload.mjs');
  await writeFile(
    preload,
    [
      "import { appendFileSync } from 'node:fs';",
      "import { createRequire, register } from 'node:module';",
      "import { pathToFileURL } from 'node:url';",
      `register(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});`,
      'const required = createRequire(import.meta.url).cache;',
      "process.on('exit', () => appendFileSync(process.env.DDS_TEST_MODULE_LIST, Object.keys(required).map((f) => pathToFileURL(f).href + '\\n').join('')));",
      // Node's own modules, as node:<id> (internal ones too: node:internal/deps/undici/undici is its fetch).
      "process.on('exit', () => appendFileSync(process.env.DDS_TEST_MODULE_LIST, process.moduleLoadList.filter((m) => m.startsWith('NativeModule ')).map((m) => 'node:' + m.slice(13) + '\\n').join('')));",
      '',
    ].join('\n'),
  );
});

/** The URLs of the modules `dds-migrate ARGS` loads, and what it printed. */
async function loadedModules(
  args: readonly string[],
  name: string,
): Promise<{ urls: string[]; stdout: string }> {
  const list = join(dir, `${name}.txt`);
  await writeFile(list, '');
  const { stdout } = await run(
    process.execPath,
    ['--import', pathToFileURL(preload).href, BUILT_CLI, ...args],
    {
      env: { PATH: process.env.PATH ?? '', DDS_TEST_MODULE_LIST: list },
    },
  );
  const urls = (await readFile(list, 'utf8')).split('\n').filter((line) => line !== '');
  return { urls, stdout };
}

/** yargs and the packages only it loads (its help layout). */
const YARGS = /\/node_modules\/(yargs|yargs-parser|cliui|y18n|string-width)\//;

function heavyAmong(urls: readonly string[]): string[] {
  return urls.filter((url) => HEAVY.some((pattern) => pattern.test(url)));
}

describe('start-up loads only what it prints', () => {
  for (const [name, args, printed] of [
    ['version', ['--version'], /^\d+\.\d+\.\d+/],
    ['help', ['--help'], /Commands:/],
    ['command-help', ['cases', 'update', '--help'], /dds-migrate cases update/],
    ['completion', ['completion'], /--get-yargs-completions/],
  ] as const) {
    it(`dds-migrate ${args.join(' ')} loads no client, schema, snapshot, emulator, logger or yargs`, async () => {
      const { urls, stdout } = await loadedModules(args, name);
      expect(stdout).toMatch(printed);
      // The hook saw the CLI itself (it works), and none of the heavy modules.
      expect(urls.some((url) => url.endsWith('/dist/src/cli/main.js'))).toBe(true);
      expect(heavyAmong(urls)).toEqual([]);
      expect(urls.filter((url) => YARGS.test(url))).toEqual([]);
    });
  }

  it('a command line yargs parses loads yargs and the modules of the command it names (the control)', async () => {
    // Not a page laid out ahead (an option besides --help): yargs lays it out, with the command loaded.
    const { urls, stdout } = await loadedModules(['connections', 'list', '--help', '--json'], 'control');
    expect(stdout).toMatch(/dds-migrate connections list/);
    expect(urls.some((url) => YARGS.test(url))).toBe(true);
    const heavy = heavyAmong(urls);
    expect(heavy.some((url) => url.includes('/dist/src/api/'))).toBe(true);
    expect(heavy.some((url) => url.includes('/node_modules/axios/'))).toBe(true);
    // axios loads without Node's fetch (src/api/http.ts): the client uses the http adapter.
    expect(urls).toContain('node:http');
    expect(
      urls.filter((url) => /^node:internal\/(deps\/undici|webstreams\/readablestream)/.test(url)),
    ).toEqual([]);
    // ...nor what its bundle requires for form bodies, proxies and redirects, which the client never uses.
    expect(
      urls.filter((url) =>
        /\/node_modules\/(form-data|https-proxy-agent|follow-redirects|mime-db)\//.test(url),
      ),
    ).toEqual([]);
    // ...and not those of the commands it does not run.
    expect(urls.filter((url) => /\/dist\/src\/(emulator|cases|export|verify|undo)\//.test(url))).toEqual([]);
    // Packages loaded on first use: no age file or key, no progress bar, no CSV row to quote here.
    expect(
      urls.filter((url) => /\/node_modules\/(age-encryption|@noble|cli-progress|csv-stringify)\//.test(url)),
    ).toEqual([]);
  });
});
