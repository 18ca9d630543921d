/**
 * Every `--help` example runs as printed. The pages are found by walking the help itself (the top
 * level, then each command and group listed under "Commands:"), so a new command or example is
 * covered without touching this test. Each example line runs through `sh -c` with `dds-migrate` on
 * the PATH (the built CLI), in one folder holding README "Try the examples"'s config and overrides
 * file (read from the README; the ports are the test's emulators', serving the shipped `prod` with
 * `--export-clear-secrets` and `dr-partial`), with the tokens the README exports, in page
 * order: files an example names are made by an earlier one (`export -o prod.snapshot.jsonl` before
 * `validate prod.snapshot.jsonl`). An example exits 0, or 1 where 1 means "differences found"
 * (diff, validate, verify); never 2 (a usage error: the example is wrong) or 70 (a bug).
 * `emulator` examples serve until interrupted: each must print its banner, then exit 0 on Ctrl-C.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { assertBuiltCliFresh, BUILT_CLI } from '../helpers/built-cli.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const FIXTURES = join(process.cwd(), 'fixtures/environments');
/** The commands whose exit 1 means "differences or findings", not a failure. */
const EXIT_1_ALLOWED = new Set(['diff', 'validate', 'verify']);

let prod: RunningEmulator;
let dr: RunningEmulator;
let dir: string;
let env: NodeJS.ProcessEnv;

/**
 * README "Try the examples": its config file and overrides file, as the README prints them, with the
 * emulators' ports of this run in place of 8484 (prod) and 8485 (dr).
 */
async function readTryTheExamples(
  prodUrl: string,
  drUrl: string,
): Promise<{ config: string; overrides: string }> {
  const readme = await readFile(join(process.cwd(), 'README.md'), 'utf8');
  const block = /\*\*Try the examples\.\*\*[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  const config = block && /cat > dds-migrate\.config\.json <<'JSON'\n([\s\S]*?)\nJSON\n/.exec(block)?.[1];
  const overrides = block && /cat > dr-overrides\.json <<'JSON'\n([\s\S]*?)\nJSON\n/.exec(block)?.[1];
  if (!config || !overrides) throw new Error('README "Try the examples" lost its config or overrides file');
  const ports = config
    .replaceAll('http://127.0.0.1:8484', prodUrl)
    .replaceAll('http://127.0.0.1:8485', drUrl);
  return { config: ports, overrides };
}

beforeAll(async () => {
  assertBuiltCliFresh();
  // As README "Try the examples": prod exports its credentials in the clear, dr is the partial copy.
  prod = await startEmulator({ port: 0, data: join(FIXTURES, 'prod.json'), exportClearSecrets: true });
  dr = await startEmulator({ port: 0, data: join(FIXTURES, 'dr-partial.json') });
  dir = await makeTempDir('dds-help-examples-');
  const bin = join(dir, '.bin');
  await mkdir(bin);
  await writeFile(join(bin, 'dds-migrate'), `#!/bin/sh\nexec "${process.execPath}" "${BUILT_CLI}" "$@"\n`);
  await chmod(join(bin, 'dds-migrate'), 0o755);
  const files = await readTryTheExamples(prod.url, dr.url);
  expect(JSON.parse(files.config).environments.prod.url).toBe(prod.url);
  await writeFile(join(dir, 'dds-migrate.config.json'), files.config);
  await writeFile(join(dir, 'dr-overrides.json'), `${files.overrides}\n`);
  env = {
    PATH: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: dir,
    DDS_PROD_TOKEN: prod.token,
    DDS_DR_TOKEN: dr.token,
  };
});

afterAll(async () => {
  await prod?.close();
  await dr?.close();
});

interface Page {
  readonly path: readonly string[];
  readonly examples: readonly string[];
  /** Every line of the "Examples:" section. */
  readonly section: readonly string[];
}

/** The text between a heading line (`Commands:`) and the next blank line. */
function section(help: string, heading: string): string[] {
  const lines = help.split('\n');
  const start = lines.indexOf(heading);
  if (start < 0) return [];
  const end = lines.findIndex((line, i) => i > start && line.trim() === '');
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

/** Every help page, depth first in the order `--help` lists the commands, with its example lines. */
async function collectPages(path: readonly string[] = []): Promise<Page[]> {
  const run = await runCli([...path, '--help']);
  if (run.exitCode !== 0) throw new Error(`'${path.join(' ')} --help' exited ${run.exitCode}: ${run.stderr}`);
  const help = run.stdout;
  // An example is one unwrapped line; its description is indented further on the next line.
  const lines = section(help, 'Examples:');
  const examples = lines.filter((line) => line.startsWith('  dds-migrate ')).map((line) => line.slice(2));
  const pages: Page[] = [{ path, examples, section: lines }];
  const prefix = ['dds-migrate', ...path].join(' ');
  for (const line of section(help, 'Commands:')) {
    const m = new RegExp(`^  ${prefix} ([a-z][a-z-]*)`).exec(line);
    // yargs' own completion command has no page of ours.
    if (m?.[1] && m[1] !== 'completion') pages.push(...(await collectPages([...path, m[1]])));
  }
  return pages;
}

interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runShell(line: string): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', line], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * A long-running example (the emulator): started, its banner awaited, then interrupted as Ctrl-C
 * does. `exec` so that the signal reaches the CLI rather than a shell that dies of it.
 */
function runUntilBanner(line: string): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = spawn('/bin/sh', ['-c', `exec ${line}`], {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let interrupted = false;
    const check = () => {
      if (!interrupted && /Ctrl-C to stop/.test(stdout + stderr) && child.pid !== undefined) {
        interrupted = true;
        process.kill(child.pid, 'SIGINT');
      }
    };
    child.stdout?.on('data', (c: Buffer) => {
      stdout += c.toString();
      check();
    });
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
      check();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: interrupted ? code : -1, stdout, stderr }));
  });
}

// Collected while the file loads (from the in-process CLI), so that each example is a test of its own.
const pages = await collectPages();

describe('every --help example runs as printed against the shipped environments', () => {
  it('the walk found the groups and their commands (a broken walk would test nothing)', () => {
    const names = pages.map((p) => p.path.join(' '));
    expect(names).toEqual(expect.arrayContaining(['', 'connections', 'connections list', 'cases update']));
  });

  for (const page of pages) {
    const name = ['dds-migrate', ...page.path].join(' ');
    it(`'${name} --help' has examples, each a whole line with its description below`, () => {
      expect(page.examples.length).toBeGreaterThan(0);
      // Not yargs' two-column layout (`.example()`), which wraps long command lines into pieces.
      const layout = page.section.map((line) =>
        line.startsWith('  dds-migrate ') ? 'C' : /^ {6}\S/.test(line) ? 'D' : '?',
      );
      expect(layout.join('')).toBe('CD'.repeat(page.examples.length));
    });
    for (const line of page.examples) {
      it(line, { timeout: 60_000 }, async () => {
        const command = line.split(' ')[1] ?? '';
        const result = command === 'emulator' ? await runUntilBanner(line) : await runShell(line);
        const allowed = EXIT_1_ALLOWED.has(command) ? [0, 1] : [0];
        expect(allowed, `exit ${result.code}\n${result.stderr}`).toContain(result.code);
      });
    }
  }
});
