/**
 * Every recipe of the README runs as printed. A recipe is a fenced `sh` block right after a
 * `<!-- recipe: NAME -->` line; each is run in a folder of its own holding README "Try the examples"'s
 * config and overrides files, against two emulators started for it (the shipped `prod` with
 * `--export-clear-secrets` and `dr-partial`, as that section starts them), with `dds-migrate` on the
 * PATH (the built CLI) and the tokens the README exports. Each command line (a `\` continues it; `#`
 * lines are comments) runs through `sh -c` in order and must exit 0, or 1 where 1 means "differences
 * found" (diff, validate, verify). A recipe marked `(needs age)` runs only when `export --help` offers
 * `--encrypt-to` and the `age-keygen` program is installed; otherwise it is skipped, saying why.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startEmulator } from '../../src/emulator/index.js';
import { assertBuiltCliFresh, BUILT_CLI } from '../helpers/built-cli.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const FIXTURES = join(process.cwd(), 'fixtures/environments');
/** The commands whose exit 1 means "differences or findings", not a failure. */
const EXIT_1_ALLOWED = new Set(['diff', 'validate', 'verify']);

interface Recipe {
  readonly name: string;
  readonly needsAge: boolean;
  readonly lines: readonly string[];
}

const readme = await readFile(join(process.cwd(), 'README.md'), 'utf8');

/** The recipes of the README, in order: each `<!-- recipe: NAME -->` followed by a ```sh block. */
function readRecipes(text: string): Recipe[] {
  const recipes: Recipe[] = [];
  for (const m of text.matchAll(/<!-- recipe: ([^>]+?) -->\n```sh\n([\s\S]*?)```/g)) {
    const label = m[1]!.trim();
    const lines = m[2]!
      .replace(/\\\n\s*/g, '')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    recipes.push({
      name: label.replace(/\s*\(needs age\)$/, ''),
      needsAge: label.endsWith('(needs age)'),
      lines,
    });
  }
  return recipes;
}

/** README "Try the examples": its config and overrides files, ports replaced by the emulators' of this run. */
function tryTheExamples(prodUrl: string, drUrl: string): { config: string; overrides: string } {
  const block = /\*\*Try the examples\.\*\*[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  const config = block && /cat > dds-migrate\.config\.json <<'JSON'\n([\s\S]*?)\nJSON\n/.exec(block)?.[1];
  const overrides = block && /cat > dr-overrides\.json <<'JSON'\n([\s\S]*?)\nJSON\n/.exec(block)?.[1];
  if (!config || !overrides) throw new Error('README "Try the examples" lost its config or overrides file');
  return {
    config: config.replaceAll('http://127.0.0.1:8484', prodUrl).replaceAll('http://127.0.0.1:8485', drUrl),
    overrides,
  };
}

interface Finished {
  readonly code: number | null;
  readonly stderr: string;
}

function runShell(line: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', line], { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
}

const recipes = readRecipes(readme);
const exportHelp = await runCli(['export', '--help']);
const encryptionShipped = exportHelp.stdout.includes('--encrypt-to');
const ageInstalled = spawnSync('age-keygen', ['--version']).error === undefined;

describe('every README recipe runs as printed against two fresh emulators', () => {
  it('finds the recipes (a broken extraction would test nothing)', () => {
    expect(recipes.map((r) => r.name)).toEqual(
      expect.arrayContaining(['clone', 'restore', 'undo', 'standby', 'backup', 'cases']),
    );
    for (const recipe of recipes) expect(recipe.lines.length, recipe.name).toBeGreaterThan(0);
  });

  for (const recipe of recipes) {
    const skip = !recipe.needsAge
      ? undefined
      : !encryptionShipped
        ? '`export --help` does not list --encrypt-to'
        : !ageInstalled
          ? 'age-keygen is not installed'
          : undefined;
    const title = skip ? `${recipe.name} (skipped: ${skip})` : recipe.name;
    it.skipIf(skip !== undefined)(title, { timeout: 180_000 }, async () => {
      assertBuiltCliFresh();
      const prod = await startEmulator({
        port: 0,
        data: join(FIXTURES, 'prod.json'),
        exportClearSecrets: true,
      });
      const dr = await startEmulator({ port: 0, data: join(FIXTURES, 'dr-partial.json') });
      try {
        const dir = await makeTempDir(`dds-recipe-${recipe.name}-`);
        const bin = join(dir, '.bin');
        await mkdir(bin);
        await writeFile(
          join(bin, 'dds-migrate'),
          `#!/bin/sh\nexec "${process.execPath}" "${BUILT_CLI}" "$@"\n`,
        );
        await chmod(join(bin, 'dds-migrate'), 0o755);
        const files = tryTheExamples(prod.url, dr.url);
        await writeFile(join(dir, 'dds-migrate.config.json'), files.config);
        await writeFile(join(dir, 'dr-overrides.json'), `${files.overrides}\n`);
        const env = {
          PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
          HOME: dir,
          DDS_PROD_TOKEN: prod.token,
          DDS_DR_TOKEN: dr.token,
        };
        for (const line of recipe.lines) {
          const result = await runShell(line, dir, env);
          const command = line.split(' ')[1] ?? '';
          const allowed = line.startsWith('dds-migrate ') && EXIT_1_ALLOWED.has(command) ? [0, 1] : [0];
          expect(allowed, `${line}\nexit ${result.code}\n${result.stderr}`).toContain(result.code);
        }
      } finally {
        await prod.close();
        await dr.close();
      }
    });
  }
});
