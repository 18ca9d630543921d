// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:NAME}" is a literal overrides placeholder, not a template
/**
 * End to end: a bad file, a full disk, a closed pipe, a bad flag each get one line and the
 * contract's exit code (2; 0 for a reader that closed the pipe), never "this is a bug" (70), and
 * nothing is sent when an output could not be written. Standard output failures need the real
 * process, so those tests run the built CLI as a child; so does the test as a user who is not root.
 */
import { spawn } from 'node:child_process';
import { closeSync, openSync, rmSync } from 'node:fs';
import { chmod, chown, copyFile, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import type { Connection } from '../../src/model/connection.js';
import { clearRegisteredSecrets } from '../../src/secrets.js';
import { assertBuiltCliFresh, BUILT_CLI, copyBuiltCliForAnyUser } from '../helpers/built-cli.js';
import { type FullDisk, mountFullDisk, NON_ROOT } from '../helpers/full-disk.js';
import { type CliRun, runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { prepareImportSource, targetReferences, writeSnapshot } from './import.helpers.js';

/** Exactly one `error: ` line on stderr, no stack trace. */
function expectOneErrorLine(run: CliRun): string {
  const lines = run.stderr.split('\n').filter((l) => l !== '');
  expect(lines, run.stderr).toHaveLength(1);
  const line = lines[0] ?? '';
  expect(line).toMatch(/^error: /);
  expect(line).not.toMatch(/this is a bug|\bat .+:\d+:\d+/);
  return line;
}

/** Run the built CLI as a child process; `stdout` is where its standard output goes. */
function runBuilt(
  argv: readonly string[],
  options: {
    readonly env: Record<string, string>;
    readonly cwd: string;
    /** `pipe` (captured), `closed` (the reader closed it at once) or a file descriptor. */
    readonly stdout?: 'pipe' | 'closed' | number;
    readonly prefix?: readonly string[];
    /** The CLI to run; default the built one of this working copy. */
    readonly cli?: string;
  },
): Promise<CliRun> {
  const command = [...(options.prefix ?? []), process.execPath, options.cli ?? BUILT_CLI, ...argv];
  const stdoutMode = options.stdout ?? 'pipe';
  const child = spawn(command[0] as string, command.slice(1), {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...options.env },
    stdio: ['ignore', typeof stdoutMode === 'number' ? stdoutMode : 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  if (stdoutMode === 'closed') child.stdout?.destroy();
  else child.stdout?.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ stdout, stderr, exitCode: code ?? -1 }));
  });
}

const disk = mountFullDisk();
const noDisk = typeof disk === 'string' ? disk : undefined;
const full = (): FullDisk => disk as FullDisk;

let emu: RunningEmulator;
let dir: string;
beforeAll(async () => {
  assertBuiltCliFresh();
  emu = await startEmulator({ data: join(process.cwd(), 'fixtures/environments/prod.json') });
  dir = await makeTempDir('dds-hardening-');
});
afterAll(async () => {
  await emu.close();
  if (typeof disk !== 'string') disk.unmount();
});

describe('standard output (items 6 and 7)', () => {
  it('diff --format json > a full disk: exit 2 and one line (was exit 0/1, an empty file, no error)', async () => {
    const a: Connection[] = [{ name: 'a', type: 's3', description: 'one' } as Connection];
    const b: Connection[] = [{ name: 'a', type: 's3', description: 'two' } as Connection];
    await writeSnapshot(join(dir, 'a.snapshot.jsonl'), a, 'http://127.0.0.1:1');
    await writeSnapshot(join(dir, 'b.snapshot.jsonl'), b, 'http://127.0.0.1:1');
    const devFull = openSync('/dev/full', 'w');
    try {
      const run = await runBuilt(
        ['diff', '--from', 'a.snapshot.jsonl', '--to', 'b.snapshot.jsonl', '--format', 'json', '--quiet'],
        { env: {}, cwd: dir, stdout: devFull },
      );
      expect(expectOneErrorLine(run)).toBe(
        'error: standard output: cannot write the output (ENOSPC). Free disk space, then re-run',
      );
      expect(run.exitCode).toBe(2);
    } finally {
      closeSync(devFull);
    }
  });

  it.skipIf(noDisk)(
    `connections list > a file on a disk with less room than the output: exit 2, one line (was exit 0, the file cut short)${noDisk ? ` [skipped: ${noDisk}]` : ''}`,
    async () => {
      const many = await startEmulator({
        data: join(process.cwd(), 'fixtures/environments/empty.json'),
        generate: 60,
      });
      const path = join(full().dir, 'list.txt');
      // One 4 KiB page of room: the table (about 6.5 KB, written at once) gets a short write.
      full().leaveRoom(4096);
      const out = openSync(path, 'w');
      try {
        const run = await runBuilt(['connections', 'list', '--env', many.url, '--format', 'table'], {
          env: { DDS_TOKEN: many.token },
          cwd: dir,
          stdout: out,
        });
        expect(expectOneErrorLine(run)).toBe(
          'error: standard output: cannot write the output (ENOSPC). Free disk space, then re-run',
        );
        expect(run.exitCode).toBe(2);
      } finally {
        closeSync(out);
        rmSync(path, { force: true });
        full().leaveRoom(0);
        await many.close();
      }
    },
  );

  it('connections list into a pipe the reader closed: quiet, exit 0 (was exit 70 with an EPIPE stack)', async () => {
    // Pages of 5: the list is still fetching when its first write meets the closed pipe.
    const paged = await startEmulator({
      data: join(process.cwd(), 'fixtures/environments/prod.json'),
      maxPageSize: 5,
    });
    try {
      const run = await runBuilt(['connections', 'list', '--env', paged.url, '--format', 'ndjson'], {
        env: { DDS_TOKEN: paged.token },
        cwd: dir,
        stdout: 'closed',
      });
      expect(run.stderr).toBe('');
      expect(run.exitCode).toBe(0);
      expect(paged.record.requests.filter((r) => r.method === 'GET').length).toBeGreaterThan(2);
    } finally {
      await paged.close();
    }
  });
});

describe('export from a service whose download is a JSON object, not an array', () => {
  it('downloads again within the retry policy, then exit 5 with one line (was exit 13 with nothing said)', async () => {
    const downloads: string[] = [];
    const hostile = createServer((req, res) => {
      req.resume();
      if (req.url?.includes('/file-download/export')) downloads.push(req.url);
      const body = req.url?.includes('/scanProfiles')
        ? '{"scanProfiles":[]}'
        : '{"status":"success","data":{"ds_connections":[]}}';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
    const { port } = hostile.address() as AddressInfo;
    try {
      const run = await runBuilt(['export', '--from', `http://127.0.0.1:${port}`, '-o', 'object.jsonl'], {
        env: { DDS_TOKEN: 't' },
        cwd: dir,
      });
      expect(run.exitCode).toBe(5);
      expect(expectOneErrorLine(run)).toMatch(/kept failing after 6 downloads of the export/);
      expect(downloads).toHaveLength(6);
      expect(await readdir(dir)).not.toContain('object.jsonl');
    } finally {
      hostile.close();
    }
  }, 60_000);
});

describe('cases list into a pipe the reader closed', () => {
  it('quiet, exit 0, and the listing stops (was exit 13: waiting for a drain that never came)', async () => {
    const many = await startEmulator({
      data: join(process.cwd(), 'fixtures/environments/prod.json'),
      generateCases: 20_000,
    });
    try {
      const run = await runBuilt(['cases', 'list', '--env', many.url, '--format', 'ndjson'], {
        env: { DDS_TOKEN: many.token },
        cwd: dir,
        stdout: 'closed',
      });
      expect(run.stderr).toBe('');
      expect(run.exitCode).toBe(0);
    } finally {
      await many.close();
    }
  });
});

describe('import: outputs checked before anything is sent (item 3)', () => {
  let source: Awaited<ReturnType<typeof prepareImportSource>>;
  let target: RunningEmulator;
  beforeAll(async () => {
    source = await prepareImportSource('dds-hardening-import-');
  });
  afterAll(async () => {
    await source.source.close();
  });
  beforeEach(async () => {
    target = await startEmulator({ data: { connections: [], ...targetReferences() } });
  });
  afterEach(async () => {
    await target.close();
    clearRegisteredSecrets();
  });
  const env = () => ({ DDS_TARGET_TOKEN: target.token, ...source.secretEnv });
  const args = (...extra: string[]) => [
    'import',
    source.snapshot,
    '--to',
    target.url,
    '--overrides',
    source.overridesPath,
    ...extra,
  ];
  const posts = () => target.record.requests.filter((r) => r.method === 'POST').length;

  it('--report in a folder that refuses files: exit 2 before the first POST (was found after every POST)', async () => {
    const work = await makeTempDir('dds-hardening-run-');
    const run = await runCli(args('--journal', join(work, 'j.jsonl'), '--report', '/sys/report.jsonl'), {
      env: env(),
    });
    expect(expectOneErrorLine(run)).toContain('Cannot write /sys/report.jsonl');
    expect(run.exitCode).toBe(2);
    expect(posts()).toBe(0);
  });

  it('--report naming a folder: exit 2 before the first POST (was exit 70 after every POST)', async () => {
    const work = await makeTempDir('dds-hardening-run-');
    const run = await runCli(args('--journal', join(work, 'j.jsonl'), '--report', work), { env: env() });
    expect(expectOneErrorLine(run)).toContain(
      `Cannot write ${work}: it is a folder. Name a file for --report`,
    );
    expect(run.exitCode).toBe(2);
    expect(posts()).toBe(0);
  });

  it('--journal naming a folder: exit 2, one line (was exit 70, EISDIR)', async () => {
    const work = await makeTempDir('dds-hardening-run-');
    const run = await runCli(args('--journal', work, '--id-map', join(work, 'ids.json')), { env: env() });
    expect(expectOneErrorLine(run)).toContain('it is a folder. Name a file for --journal');
    expect(run.exitCode).toBe(2);
    expect(posts()).toBe(0);
  });

  it.skipIf(typeof NON_ROOT === 'string')(
    `as a user who cannot write the snapshot folder, the journal beside it: exit 2, one line, nothing sent (was exit 70)${typeof NON_ROOT === 'string' ? ` [skipped: ${NON_ROOT}]` : ''}`,
    async () => {
      const user = NON_ROOT as Exclude<typeof NON_ROOT, string>;
      // A root-owned folder nobody may read but not write, holding a snapshot that user may read.
      const readOnly = await makeTempDir('dds-hardening-ro-');
      await chmod(readOnly, 0o755);
      const snapshot = join(readOnly, 'prod.snapshot.jsonl');
      const overrides = join(readOnly, 'overrides.json');
      await copyFile(source.snapshot, snapshot);
      await copyFile(source.overridesPath, overrides);
      for (const f of [snapshot, overrides]) await chown(f, user.uid, user.gid);
      // That user may not reach this working copy (a clone in a 0700 folder): a copy it can read.
      const cli = await copyBuiltCliForAnyUser();
      const run = await runBuilt(['import', snapshot, '--to', target.url, '--overrides', overrides], {
        env: env(),
        cwd: '/',
        prefix: user.prefix,
        cli: cli.main,
      }).finally(() => rm(cli.dir, { recursive: true, force: true }));
      expect(expectOneErrorLine(run)).toMatch(
        /Cannot write .*prod\.snapshot\.jsonl\.127\.0\.0\.1_\d+\.journal\.jsonl \(EACCES\)/,
      );
      expect(run.exitCode).toBe(2);
      expect(posts()).toBe(0);
      expect(await readdir(readOnly)).toEqual(['overrides.json', 'prod.snapshot.jsonl']);
    },
  );

  it('an unterminated ${env:DB_PW: exit 2 naming the override, nothing sent (was sent as the password, exit 0)', async () => {
    const work = await makeTempDir('dds-hardening-run-');
    const overrides = join(work, 'o.json');
    const first = source.entries[0] as Connection;
    await writeFile(overrides, JSON.stringify({ byName: { [first.name]: { password: '${env:DB_PW' } } }));
    const run = await runCli(
      ['import', source.snapshot, '--to', target.url, '--overrides', overrides, '--only', first.name],
      { env: { ...env(), DB_PW: 'canary-pw-123' } },
    );
    expect(expectOneErrorLine(run)).toContain(
      `o.json: /byName/${first.name}/password: malformed \${env:NAME} placeholder`,
    );
    expect(run.exitCode).toBe(2);
    expect(posts()).toBe(0);
  });

  it.skipIf(noDisk)(
    `--report on a disk that fills during the run: exit 2, one line, the journal complete, a re-run sends nothing${noDisk ? ` [skipped: ${noDisk}]` : ''}`,
    async () => {
      const work = await makeTempDir('dds-hardening-run-');
      const journal = join(work, 'j.jsonl');
      const report = join(full().dir, 'report.jsonl');
      const run = await runCli(args('--journal', journal, '--report', report, '--quiet'), { env: env() });
      // (A warning about a type without a template schema comes first.)
      expect(run.stderr.split('\n').filter((l) => l.startsWith('error: '))).toEqual([
        `error: ${report}: cannot write the output file (ENOSPC). Free disk space, then re-run`,
      ]);
      expect(run.stderr).not.toMatch(/this is a bug|\bat .+:\d+:\d+/);
      expect(run.exitCode).toBe(2);
      expect(posts()).toBe(source.entries.length);
      expect((await readdir(full().dir)).filter((n) => n !== '.filler')).toEqual([]);
      const again = await runCli(args('--journal', journal, '--report', join(work, 'r.jsonl'), '--quiet'), {
        env: env(),
      });
      expect(again.exitCode).toBe(0);
      expect(posts()).toBe(source.entries.length);
    },
  );

  it.each([
    [['--concurrency', '1000000'], 'Expected --concurrency to be an integer from 1 to 64, got 1000000'],
    [['--rate', '1e-7'], 'Expected --rate to be a number of requests per second >= 0.001, got 1e-7'],
  ])('%j is refused with the range of the config schema (item 10)', async (flag, message) => {
    const work = await makeTempDir('dds-hardening-run-');
    const run = await runCli(args('--journal', join(work, 'j.jsonl'), ...flag), { env: env() });
    expect(expectOneErrorLine(run)).toContain(message);
    expect(run.exitCode).toBe(2);
    expect(posts()).toBe(0);
  });
});

describe.skipIf(noDisk)(
  `local files on a full disk: exit 2, one line, nothing half-written (item 3)${noDisk ? ` [skipped: ${noDisk}]` : ''}`,
  () => {
    const cli = (argv: readonly string[]) => runCli(argv, { env: { DDS_TOKEN: emu.token }, cwd: dir });
    const leftovers = async () => (await readdir(full().dir)).filter((n) => n !== '.filler');

    it('export -o', async () => {
      const run = await cli(['export', '--from', emu.url, '-o', join(full().dir, 'p.snapshot.jsonl')]);
      expect(expectOneErrorLine(run)).toContain('cannot write the snapshot (ENOSPC)');
      expect(run.exitCode).toBe(2);
      expect(await leftovers()).toEqual([]);
    });

    it('export --out-dir: no snapshot and no empty DIR/<env> folder left', async () => {
      const run = await cli(['export', '--from', emu.url, '--out-dir', full().dir]);
      expect(expectOneErrorLine(run)).toContain('cannot write the snapshot (ENOSPC)');
      expect(run.exitCode).toBe(2);
      expect(await leftovers()).toEqual([]);
    });

    it('cases list -o', async () => {
      const run = await cli([
        'cases',
        'list',
        '--env',
        emu.url,
        '--format',
        'json',
        '-o',
        join(full().dir, 'c.json'),
      ]);
      expect(expectOneErrorLine(run)).toContain('c.json: cannot write the output file (ENOSPC)');
      expect(run.exitCode).toBe(2);
      expect(await leftovers()).toEqual([]);
    });

    it('cases update --audit: exit 2 before the bulk PATCH, the trail holds no torn line', async () => {
      const audit = join(full().dir, 'audit.jsonl');
      const run = await cli([
        'cases',
        'update',
        '--env',
        emu.url,
        '--where',
        'caseStatus=open',
        '--set',
        'caseStatus=resolved',
        '--yes',
        '--audit',
        audit,
      ]);
      // The preview of the matched cases comes first on stderr; then one error line.
      const errors = run.stderr.split('\n').filter((l) => l.startsWith('error: '));
      expect(errors).toEqual([
        `error: ${audit}: cannot write the audit file (ENOSPC). Free disk space, then re-run`,
      ]);
      expect(run.stderr).not.toMatch(/this is a bug|\bat .+:\d+:\d+/);
      expect(run.exitCode).toBe(2);
      expect(emu.record.requests.filter((r) => r.method === 'PATCH')).toHaveLength(0);
      expect(await readFile(audit, 'utf8')).toBe('');
    });

    it('--log-file: exit 2 and one line once the command is done (was an unhandled error event)', async () => {
      const log = join(full().dir, 'run.log');
      const run = await cli([
        'connections',
        'list',
        '--env',
        emu.url,
        '--log-level',
        'info',
        '--log-file',
        log,
        '--quiet',
      ]);
      const lines = run.stderr.split('\n').filter((l) => l.startsWith('error: '));
      expect(lines).toEqual([
        `error: ${log}: cannot write the log file (ENOSPC). Free disk space, then re-run`,
      ]);
      expect(run.stderr).not.toMatch(/this is a bug/);
      expect(run.exitCode).toBe(2);
    });
  },
);
