/**
 * The help pages and completion scripts the build lays out ahead (`dist/src/cli/help-pages.json`,
 * printed by the CLI without loading yargs) are what yargs prints now: every page of every command and
 * group at every width laid out, asked with `--help` and with `-h`, and the completion script of each
 * shell. A page that drifted from the code fails here; then `npm run build` lays them out again.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { commandEntries } from '../../src/cli/commands.js';
import {
  completionShell,
  LAID_OUT_WIDTHS,
  type LaidOutPages,
  laidOutPage,
  laidOutRequests,
} from '../../src/cli/help-pages.js';
import { runYargs } from '../../src/cli/run-cli.js';
import { packageRoot } from '../../src/paths.js';
import { assertBuiltCliFresh } from '../helpers/built-cli.js';

let pages: LaidOutPages;

beforeAll(() => {
  assertBuiltCliFresh();
  pages = JSON.parse(readFileSync(join(packageRoot(), 'dist', 'src', 'cli', 'help-pages.json'), 'utf8'));
});

/** What yargs prints for `dds-migrate ARGV` on a stdout `columns` wide, and the exit code. */
async function yargsPrints(
  argv: readonly string[],
  columns: number,
): Promise<{ code: number; text: string }> {
  let text = '';
  const stdout = Object.assign(
    new Writable({
      write(chunk, _encoding, done) {
        text += String(chunk);
        done();
      },
    }),
    { columns },
  );
  const code = await runYargs(argv, { stdout, stderr: stdout, env: {}, cwd: process.cwd() });
  return { code, text };
}

const requests = laidOutRequests(commandEntries);
const shellBefore = { SHELL: process.env.SHELL, ZSH_NAME: process.env.ZSH_NAME };

afterEach(() => {
  for (const [name, value] of Object.entries(shellBefore))
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
});

describe('help pages laid out by the build', () => {
  it('cover the top level, every group and command, and each group command', () => {
    const names = requests.map((argv) => argv.join(' '));
    expect(names).toEqual(
      expect.arrayContaining(['--help', 'import --help', 'cases --help', 'cases update --help']),
    );
    expect(names).toHaveLength(1 + commandEntries.length + 9);
    for (const width of LAID_OUT_WIDTHS)
      expect(Object.keys(pages.help[width] ?? {}).sort()).toEqual(names.sort());
  });

  for (const width of LAID_OUT_WIDTHS)
    it(`are what yargs prints at ${width} columns, asked with --help or -h`, async () => {
      for (const argv of requests) {
        const laidOut = pages.help[width]?.[argv.join(' ')];
        expect(laidOut, argv.join(' ')).toMatch(/^dds-migrate/);
        for (const flag of ['--help', '-h'])
          expect(await yargsPrints([...argv.slice(0, -1), flag], width), argv.join(' ')).toEqual({
            code: 0,
            text: laidOut,
          });
      }
    });

  it('the completion scripts are what yargs prints for each shell', async () => {
    delete process.env.ZSH_NAME;
    for (const shell of ['bash', 'zsh', 'fish']) {
      process.env.SHELL = `/usr/bin/${shell}`;
      expect(completionShell(process.env)).toBe(shell);
      const laidOut = pages.completion[shell];
      expect(laidOut).toContain('dds-migrate --get-yargs-completions');
      expect(await yargsPrints(['completion'], 100)).toEqual({ code: 0, text: laidOut });
    }
  });

  it("yargs' headings stay English whatever the locale", async () => {
    const lang = process.env.LANG;
    process.env.LANG = 'de_DE.UTF-8';
    try {
      expect((await yargsPrints(['--help'], 100)).text).toBe(pages.help[100]?.['--help']);
    } finally {
      if (lang === undefined) delete process.env.LANG;
      else process.env.LANG = lang;
    }
  });

  it('the built CLI prints one for exactly a help request at a width laid out, or `completion`', async () => {
    const built = (await import(
      pathToFileURL(join(packageRoot(), 'dist', 'src', 'cli', 'help-pages.js')).href
    )) as typeof import('../../src/cli/help-pages.js');
    const page = (argv: string[], columns?: number, env = {}) => built.laidOutPage(argv, columns, env);
    expect(page(['--help'])).toBe(pages.help[100]?.['--help']);
    expect(page(['cases', 'update', '-h'], 80)).toBe(pages.help[80]?.['cases update --help']);
    expect(page(['import', '--help'], 200)).toBe(pages.help[110]?.['import --help']);
    expect(page(['completion'], 80, { SHELL: '/bin/zsh' })).toBe(pages.completion.zsh);
    for (const argv of [
      ['import', '--help', '--json'],
      ['import', '--json', '--help'],
      ['nosuch', '--help'],
    ])
      expect(page(argv), argv.join(' ')).toBeUndefined();
    expect(page(['--help'], 90)).toBeUndefined();
    expect(page(['completion', 'bash'], 80, { SHELL: '/bin/zsh' })).toBe(pages.completion.bash);
    expect(page(['completion', 'fish'])).toBe(pages.completion.fish);
    expect(page(['completion', 'tcsh'])).toBeUndefined();
    // From the sources there is no laid-out file: yargs answers everything.
    expect(laidOutPage(['--help'], undefined, {})).toBeUndefined();
  });
});
