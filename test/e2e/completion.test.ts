/**
 * `dds-migrate completion`: a shell completion script that asks the CLI itself for candidates
 * (yargs' `--get-yargs-completions`), so the commands and options offered are the ones the code has.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { assertBuiltCliFresh, BUILT_CLI } from '../helpers/built-cli.js';
import { runCli } from '../helpers/run-cli.js';

describe('dds-migrate completion', () => {
  it('prints a bash completion script that calls back into dds-migrate', async () => {
    const run = await runCli(['completion']);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain(
      'complete -o bashdefault -o default -F _dds-migrate_yargs_completions dds-migrate',
    );
    expect(run.stdout).toContain('dds-migrate --get-yargs-completions');
  });

  it('prints the script of the shell named after it, whatever $SHELL says (the built CLI)', () => {
    assertBuiltCliFresh();
    const print = (shell: string, env: string) =>
      execFileSync(process.execPath, [BUILT_CLI, 'completion', shell], {
        env: { PATH: process.env.PATH ?? '', SHELL: env },
        encoding: 'utf8',
      });
    expect(print('zsh', '/bin/bash')).toMatch(/^#compdef dds-migrate/);
    expect(print('fish', '/bin/bash')).toContain('complete -f -c dds-migrate');
    expect(print('bash', '/bin/zsh')).toContain(
      'complete -o bashdefault -o default -F _dds-migrate_yargs_completions',
    );
  });

  it('refuses a shell it has no script for, saying which it has (exit 2)', async () => {
    const run = await runCli(['completion', 'tcsh']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain("No completion script for 'tcsh': give one of bash, zsh, fish");
  });

  it('a word that names an object property is no shell either (the built CLI)', () => {
    assertBuiltCliFresh();
    for (const word of ['constructor', '__proto__', 'toString']) {
      const run = spawnSync(process.execPath, [BUILT_CLI, 'completion', word], { encoding: 'utf8' });
      expect(run.status, word).toBe(2);
      expect(run.stderr).toContain(`No completion script for '${word}'`);
    }
  });

  it("offers the commands, a group's subcommands and a command's options", async () => {
    const top = await runCli(['--get-yargs-completions', 'dds-migrate', '']);
    expect(top.stdout.split('\n')).toEqual(
      expect.arrayContaining(['export', 'import', 'diff', 'cases', 'profiles']),
    );
    const cases = await runCli(['--get-yargs-completions', 'dds-migrate', 'cases', '']);
    expect(cases.stdout.split('\n')).toEqual(expect.arrayContaining(['list', 'resolve', 'update']));
    const importOptions = await runCli(['--get-yargs-completions', 'dds-migrate', 'import', '--']);
    expect(importOptions.stdout.split('\n')).toEqual(
      expect.arrayContaining(['--to', '--on-conflict', '--overrides', '--dry-run']),
    );
  });
});
