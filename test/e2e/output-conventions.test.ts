/**
 * Output conventions (README "Output conventions"): one list of problems, on stderr, once; repeated
 * warnings collapsed (`--verbose` for all); `--quiet` prints only errors; the progress bar never stays
 * under the last lines (Ctrl-C included); a resumed import says what is already done; a dry run into a
 * protected environment names the `--confirm` the real run needs.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { clearRegisteredSecrets } from '../../src/secrets.js';
import { runCli } from '../helpers/run-cli.js';
import { countCreatePosts, prepareImportSource, targetReferences } from './import.helpers.js';

/**
 * The screen a terminal shows after `text` (stderr of a TTY): carriage returns, line feeds and the
 * escape sequences cli-progress and readline write (cursor to column, clear line, save/restore cursor).
 */
function renderScreen(text: string): string[] {
  const lines: string[] = [''];
  let row = 0;
  let col = 0;
  let saved: [number, number] = [0, 0];
  const put = (ch: string) => {
    const line = (lines[row] ?? '').padEnd(col, ' ');
    lines[row] = line.slice(0, col) + ch + line.slice(col + 1);
    col += 1;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (ch === '\n') {
      row += 1;
      col = 0;
      if (lines[row] === undefined) lines[row] = '';
    } else if (ch === '\r') {
      col = 0;
    } else if (ch === '\x1b') {
      const rest = text.slice(i + 1);
      const csi = /^\[([?\d;]*)([A-Za-z])/.exec(rest);
      if (csi) {
        const [all, arg = '', op] = csi;
        const n = Number.parseInt(arg, 10);
        if (op === 'G') col = (Number.isNaN(n) ? 1 : n) - 1;
        else if (op === 'K') {
          const line = lines[row] ?? '';
          lines[row] =
            arg === '2' ? '' : arg === '1' ? ' '.repeat(col) + line.slice(col) : line.slice(0, col);
        } else if (op === 'A') row = Math.max(0, row - (Number.isNaN(n) ? 1 : n));
        else if (op === 'B') row += Number.isNaN(n) ? 1 : n;
        i += all.length;
      } else if (rest.startsWith('7')) {
        saved = [row, col];
        i += 1;
      } else if (rest.startsWith('8')) {
        [row, col] = saved;
        i += 1;
      }
    } else {
      put(ch);
    }
  }
  return lines.map((l) => l.trimEnd());
}

describe('output conventions', () => {
  let source: RunningEmulator;
  let dir: string;
  let snapshot: string;
  let overridesPath: string;
  let secretEnv: Record<string, string>;

  beforeAll(async () => {
    ({ source, dir, snapshot, overridesPath, secretEnv } = await prepareImportSource('output-conventions-'));
  });
  afterAll(async () => {
    await source.close();
  });
  afterEach(() => clearRegisteredSecrets());

  it("a validate of the demo's masked export prints at most 15 lines on stderr (--verbose: all)", async () => {
    // The prod fixture behind `emulator --data prod`, exported by the CLI as a user would.
    const exported = join(dir, 'exported.snapshot.jsonl');
    const exportRun = await runCli(['export', '--from', source.url, '-o', exported, '--no-progress'], {
      env: { DDS_SOURCE_TOKEN: source.token },
    });
    expect(exportRun.exitCode, exportRun.stderr).toBe(0);
    const run = await runCli(['validate', exported]);
    expect(run.exitCode).toBe(0);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines.length, run.stderr).toBeLessThanOrEqual(15);
    expect(run.stderr).toMatch(/must be supplied at import: \d+ times .*overrides init/);
    const verbose = await runCli(['validate', exported, '--verbose']);
    expect(verbose.stderr.trimEnd().split('\n').length).toBeGreaterThan(50);
    const quiet = await runCli(['validate', exported, '--quiet']);
    expect(quiet.stderr).toBe('');
  });

  it('a refused pre-flight lists its problems once, on stderr; with --json only in the document', async () => {
    const target = await startEmulator({ data: { connections: [], ...targetReferences() } });
    try {
      const args = ['import', snapshot, '--to', target.url, '--journal', join(dir, 'refused.j')];
      const run = await runCli(args, { env: { DDS_TARGET_TOKEN: target.token } });
      expect(run.exitCode).toBe(3);
      expect(run.stdout).toBe('');
      const listed = run.stderr.split('\n').filter((l) => l.startsWith('  - '));
      expect(listed.length).toBeGreaterThan(20);
      expect(new Set(listed).size, 'no problem twice').toBe(listed.length);
      expect(run.stderr.match(/Pre-flight found/g)).toHaveLength(1);

      const json = await runCli([...args, '--json'], { env: { DDS_TARGET_TOKEN: target.token } });
      expect(json.exitCode).toBe(3);
      expect(JSON.parse(json.stdout).problems).toHaveLength(listed.length);
      expect(json.stderr).not.toMatch(/^ {2}- /m);
      expect(json.stderr.match(/^error: /gm)).toHaveLength(1);
      expect(json.stderr).not.toMatch(/Pre-flight found/);

      const dry = await runCli([...args, '--dry-run'], { env: { DDS_TARGET_TOKEN: target.token } });
      expect(dry.exitCode).toBe(3);
      expect(dry.stdout).not.toMatch(/secret is masked|must be supplied/);
      expect(dry.stdout).toMatch(/invalid {4}\S+ \(\S+\): \d+ problems? \(listed on stderr\)/);
      expect(dry.stderr.split('\n').filter((l) => l.startsWith('  - '))).toEqual(listed);
      expect(countCreatePosts(target)).toBe(0);
    } finally {
      await target.close();
    }
  });

  it('an override that removes a field from many entries is one collapsed warning line (--verbose: one each)', async () => {
    const target = await startEmulator({ data: { connections: [], ...targetReferences() } });
    try {
      const base = JSON.parse(await readFile(overridesPath, 'utf8')) as Record<string, unknown>;
      const removing = join(dir, 'removing.json');
      await writeFile(removing, JSON.stringify({ ...base, all: { owners_v2: null } }));
      const args = ['import', snapshot, '--to', target.url, '--overrides', removing, '--dry-run'];
      const env = { ...secretEnv, DDS_TARGET_TOKEN: target.token };
      const run = await runCli(args, { env });
      expect(run.exitCode, run.stderr).toBe(0);
      const warned = run.stderr.split('\n').filter((l) => l.includes('overrides remove'));
      expect(warned).toHaveLength(1);
      expect(warned[0]).toMatch(
        /^warning: overrides remove \/owners_v2: \d+ times \(e\.g\. .*--verbose lists all\)$/,
      );
      const verbose = await runCli([...args, '--verbose'], { env });
      expect(verbose.stderr.split('\n').filter((l) => l.includes('overrides remove')).length).toBeGreaterThan(
        3,
      );
    } finally {
      await target.close();
    }
  });

  it('a dry run into a protected environment says the real run needs --confirm NAME (and --json says so)', async () => {
    const target = await startEmulator({ data: { connections: [], ...targetReferences() } });
    try {
      const config = join(dir, 'protected.config.json');
      await writeFile(
        config,
        JSON.stringify({ environments: { dr: { url: target.url, tokenEnv: 'DR_TOKEN', protected: true } } }),
      );
      const args = ['import', snapshot, '--to', 'dr', '--config', config, '--overrides', overridesPath];
      const env = { ...secretEnv, DR_TOKEN: target.token };
      const dry = await runCli([...args, '--dry-run'], { env });
      expect(dry.exitCode, dry.stderr).toBe(0);
      expect(dry.stdout).toContain('dr is a protected environment: the real run needs --confirm dr');
      const json = await runCli([...args, '--dry-run', '--json'], { env });
      expect(JSON.parse(json.stdout).confirmRequired).toBe('dr');
      const confirmed = await runCli([...args, '--dry-run', '--json', '--confirm', 'dr'], { env });
      expect(JSON.parse(confirmed.stdout).confirmRequired).toBeNull();
      expect(countCreatePosts(target)).toBe(0);
    } finally {
      await target.close();
    }
  });

  it('a second import after a finished one is a run of its own; a third says the target is up to date', async () => {
    const target = await startEmulator({ data: { connections: [], ...targetReferences() } });
    try {
      const journal = join(dir, 'resume.j');
      const args = [
        'import',
        snapshot,
        '--to',
        target.url,
        '--overrides',
        overridesPath,
        '--journal',
        journal,
      ];
      const env = { ...secretEnv, DDS_TARGET_TOKEN: target.token };
      const names = (await import('node:fs/promises')).readFile(snapshot, 'utf8').then((t) =>
        t
          .split('\n')
          .slice(1, 4)
          .map((l) => (JSON.parse(l) as { name: string }).name),
      );
      const first = await runCli([...args, '--only', (await names).join(',')], { env });
      expect(first.exitCode, first.stderr).toBe(0);
      expect(first.stderr).not.toMatch(/resuming/);
      const again = await runCli(args, { env });
      expect(again.exitCode, again.stderr).toBe(0);
      // The first run finished: nothing is resumed, the rest is the next run.
      expect(again.stderr).not.toMatch(/resuming/);
      expect(again.stderr).toMatch(/^Run 2 of .*resume\.j \(undo takes it back\)$/m);
      const third = await runCli(args, { env });
      expect(third.exitCode, third.stderr).toBe(0);
      // --on-conflict skip left what the target held uncompared: not called up to date.
      expect(third.stdout).toMatch(
        /^Nothing was written into .*: what it held was left as it is, not compared \(diff shows what differs/m,
      );
      expect(third.stdout).not.toMatch(/up to date/);
      const compared = await runCli([...args, '--on-conflict', 'update'], { env });
      expect(compared.exitCode, compared.stderr).toBe(0);
      expect(compared.stdout).toMatch(/is up to date with the snapshot: nothing was written$/m);
      const quiet = await runCli([...args, '--quiet'], { env });
      expect(quiet.stderr).toBe('');
    } finally {
      await target.close();
    }
  });

  it('Ctrl-C during an import on a terminal: the bar is cleared, the last lines stand on their own', async () => {
    const target = await startEmulator({ data: { connections: [], ...targetReferences() }, latencyMs: 20 });
    try {
      const controller = new AbortController();
      const args = ['import', snapshot, '--to', target.url, '--overrides', overridesPath];
      args.push('--journal', join(dir, 'ctrl-c.j'), '--concurrency', '2');
      // Ctrl-C as soon as the bar is drawn: what follows is the abort's own path, no timing involved.
      const run = runCli(args, {
        env: { ...secretEnv, DDS_TARGET_TOKEN: target.token },
        tty: true,
        signal: controller.signal,
        onStderr: (text) => {
          if (text.includes('import |')) controller.abort();
        },
      });
      const result = await run;
      expect(result.exitCode, result.stderr).toBe(130);
      expect(result.stderr).toContain('import |');
      const screen = renderScreen(result.stderr).filter((l) => l !== '');
      expect(
        screen.filter((l) => l.includes('import |')),
        screen.join('\n'),
      ).toEqual([]);
      expect(screen.at(-1)).toMatch(/^error: /);
    } finally {
      await target.close();
    }
  });
});
