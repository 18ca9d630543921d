/**
 * The CLI as a first-time user meets it: every command, on a bad flag, a malformed file, a missing
 * config, a 401 or a dead server, prints one line that says what and what to do, exits with the
 * contract's code, and leaves no file behind. Global options behave the same across commands.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { findClosedPort } from '../helpers/closed-port.js';
import { type CliRun, runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const PROD = join(process.cwd(), 'fixtures/environments/prod.json');
let emu: RunningEmulator;
let dir: string;
let env: Record<string, string>;

/** The run printed exactly one line on stderr, an `error: ` line, and no stack trace. */
function expectOneErrorLine(run: CliRun): string {
  const lines = run.stderr.split('\n').filter((l) => l !== '');
  expect(lines, run.stderr).toHaveLength(1);
  const line = lines[0] ?? '';
  expect(line).toMatch(/^error: /);
  expect(line).not.toMatch(/\bat .+:\d+:\d+/);
  expect(line).not.toMatch(/See --help\. See --help|\?\./);
  return line;
}

/** Run in the test's folder with the emulator's token. */
function cli(argv: readonly string[], extraEnv: Record<string, string> = {}): Promise<CliRun> {
  return runCli(argv, { env: { ...env, ...extraEnv }, cwd: dir });
}

beforeAll(async () => {
  emu = await startEmulator({ port: 0, data: PROD });
  dir = await makeTempDir('dds-cli-ux-');
  env = { DDS_TOKEN: emu.token };
  await writeFile(
    join(dir, 'dds-migrate.config.json'),
    JSON.stringify({
      environments: {
        prod: { url: emu.url, tokenEnv: 'PROD_TOKEN' },
        vault: { url: emu.url, tokenEnv: 'VAULT_TOKEN', protected: true },
      },
    }),
  );
});

afterAll(async () => {
  await emu.close();
});

describe('command line parsing', () => {
  it('with no command, prints the commands and one error line, exit 2', async () => {
    const run = await cli([]);
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain('Commands:');
    expect(run.stderr).toContain('dds-migrate export');
    expect(run.stderr).not.toContain('--log-level');
    const errors = run.stderr.split('\n').filter((l) => l.startsWith('error: '));
    expect(errors).toEqual(["error: Missing a command. See 'dds-migrate --help'"]);
  });

  it('a group without a subcommand lists its subcommands', async () => {
    const run = await cli(['cases']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('dds-migrate cases resolve');
    expect(run.stderr).toContain("error: Missing a subcommand of 'cases'");
  });

  it.each([
    [['conections', 'list'], "Unknown command 'conections': did you mean 'connections'?"],
    [['cases', 'lsit'], "Unknown command 'lsit': did you mean 'list'?"],
    [
      ['frobnicate'],
      "Unknown command 'frobnicate'; expected one of connections, export, validate, diff, import, undo, runs, verify, overrides, profiles, cases, emulator, completion.",
    ],
  ])('a mistyped command %j names it and suggests the right one', async (argv, expected) => {
    const run = await cli(argv);
    expect(run.exitCode).toBe(2);
    expect(expectOneErrorLine(run)).toContain(expected);
  });

  it.each([
    [['export', '--from', 'prod', '--bogus'], 'Unknown option --bogus'],
    [['export', '--fromm', 'prod', '-o', 'x.jsonl'], 'Unknown option --fromm: did you mean --from?'],
    [['diff', '--frm', 'a', '--to', 'b', '--json'], 'Unknown option --frm: did you mean --from?'],
    [['export', '--from', 'prod', '-o'], 'Expected a value after -o'],
    [['connections', 'list', '--env'], 'Expected a value after --env'],
    [['cases', 'list', '--env', 'prod', '--sort'], 'Expected a value after --sort'],
    [
      ['connections', 'list', '--env', 'prod', '--format', 'xml'],
      'Expected --format to be one of table, json, ndjson, csv, got "xml"',
    ],
    [['export', '--from', 'prod', '-o', 'a', '--out-dir', 'b'], '-o and --out-dir cannot be used together'],
    [['diff', '--from', 'prod'], 'Missing required option --to'],
    [['cases', 'resolve', 'abc', '--env', 'prod'], 'Missing required option --reason'],
    [['profiles', 'get', '--env', 'prod'], 'Missing <id> (usage: dds-migrate profiles get <id> [options])'],
    [['validate', 'a.jsonl', 'b.jsonl'], "Unexpected argument 'b.jsonl'"],
    [
      ['--log-level', 'loud', 'export', '--from', 'prod', '-o', 'x.snapshot.jsonl'],
      'Expected --log-level to be one of trace, debug',
    ],
  ])('a usage error %j names the flag or argument, in one line, exit 2', async (argv, expected) => {
    const run = await cli(argv, { PROD_TOKEN: emu.token });
    expect(run.exitCode).toBe(2);
    const line = expectOneErrorLine(run);
    expect(line).toContain(expected);
    expect(line).toMatch(/See 'dds-migrate[^']* --help'$/);
  });

  it.each([
    [
      ['import', 'x.snapshot.jsonl', '--to', 'prod', '--on-conflict', 'fail', '--on-conflict', 'fail'],
      'Expected --on-conflict to be one of skip, fail, rename, update, got 2 values (give it once)',
    ],
    [
      ['--log-level', 'error', '--log-level', 'debug', 'connections', 'list', '--env', 'prod'],
      'Expected --log-level to be one of trace, debug, info, warn, error, fatal, silent, got 2 values',
    ],
    [
      ['--config', 'a.json', '--config', 'b.json', 'connections', 'list', '--env', 'prod'],
      'Expected --config to be a non-empty value, got 2 values (give it once)',
    ],
    [
      ['--log-file', 'a.log', '--log-file', 'b.log', 'connections', 'list', '--env', 'prod'],
      'Expected --log-file to be a non-empty value, got 2 values (give it once)',
    ],
    [
      ['diff', '--from', 'prod', '--from', 'vault', '--to', 'prod'],
      'Expected --from to be a non-empty value, got 2 values (give it once)',
    ],
    [
      [
        'cases',
        'update',
        '--env',
        'prod',
        '--where',
        'caseStatus=open',
        '--set',
        'assignee=a',
        '--set',
        'assignee=b',
        '--yes',
      ],
      'Expected --set to be FIELD=VALUE, got 2 values (give it once)',
    ],
    [
      ['cases', 'list', '--env', 'prod', '--filter', 'severity=high', '--filter', 'severity=low'],
      'Expected --filter to be a non-empty value, got 2 values (give it once)',
    ],
    [
      ['cases', 'list', '--env', 'prod', '-o', 'cases.csv', '--format', 'json', '--format', 'csv'],
      'Expected --format to be one of table, json, ndjson, csv, got 2 values (give it once)',
    ],
  ])(
    'a value option given twice %j is refused, not read as another value (exit 2)',
    async (argv, expected) => {
      const run = await cli(argv, { PROD_TOKEN: emu.token });
      expect(run.exitCode).toBe(2);
      expect(expectOneErrorLine(run)).toContain(expected);
    },
  );

  it('a non-numeric number option says so instead of "got null"', async () => {
    const cases = await cli(['cases', 'list', '--env', 'prod', '--page-size', 'abc'], {
      PROD_TOKEN: emu.token,
    });
    expect(cases.exitCode).toBe(2);
    expect(expectOneErrorLine(cases)).toContain(
      'Expected --page-size to be an integer >= 1, got a value that is not a number',
    );
    const port = await cli(['emulator', '--port', '70000']);
    expect(port.exitCode).toBe(2);
    expect(expectOneErrorLine(port)).toContain('Expected --port to be an integer from 0 to 65535, got 70000');
  });

  it('every command and group shows at least one example in --help (commands)', async () => {
    const commands = [
      ['connections', 'list'],
      ['export'],
      ['validate'],
      ['diff'],
      ['profiles', 'get'],
      ['profiles', 'create'],
      ['profiles', 'clone'],
      ['cases', 'list'],
      ['cases', 'resolve'],
      ['cases', 'update'],
      ['emulator'],
    ];
    for (const command of commands) {
      const run = await cli([...command, '--help']);
      expect(run.exitCode, command.join(' ')).toBe(0);
      expect(run.stdout, command.join(' ')).toMatch(/\nExamples:\n\s+dds-migrate /);
      expect(run.stderr).toBe('');
    }
  });
});

describe('list options', () => {
  it('--type a,b and repeated --type select the same connections', async () => {
    const comma = await cli([
      'connections',
      'list',
      '--env',
      emu.url,
      '--type',
      's3,smb',
      '--format',
      'ndjson',
    ]);
    const repeated = await cli([
      'connections',
      'list',
      '--env',
      emu.url,
      '--type',
      's3',
      '--type',
      'smb',
      '--format',
      'ndjson',
    ]);
    expect(comma.exitCode).toBe(0);
    expect(repeated.exitCode).toBe(0);
    expect(repeated.stdout).toBe(comma.stdout);
    const types = new Set(
      comma.stdout
        .trim()
        .split('\n')
        .map((l) => (JSON.parse(l) as { type: string }).type),
    );
    expect(types).toEqual(new Set(['s3', 'smb']));
  });

  it.each([
    [['connections', 'list', '--env', 'URL', '--type', 's3,'], '--type'],
    [['cases', 'list', '--env', 'URL', '--status', ''], '--status'],
    [['cases', 'list', '--env', 'URL', '--status', 'open,'], '--status'],
    [['export', '--from', 'URL', '--ids', ',', '-o', 'x.snapshot.jsonl'], '--ids'],
    [['cases', 'resolve', 'a,', '--env', 'URL', '--reason', 'test'], 'the case ids'],
    [['profiles', 'clone', ',b', '--from', 'URL', '--to', 'URL', '--dry-run'], 'the profile ids'],
  ])(
    'an empty item in a list %j is refused the same way by every command (exit 2, nothing sent)',
    async (argv, name) => {
      const before = emu.record.requests.length;
      const run = await cli(argv.map((a) => (a === 'URL' ? emu.url : a)));
      expect(run.exitCode).toBe(2);
      expect(expectOneErrorLine(run)).toContain(`Expected ${name} to be a comma-separated list of values`);
      expect(emu.record.requests.length).toBe(before);
    },
  );
});

describe('--sort and streamed formats', () => {
  it('connections list checks --sort like cases list does, before anything is sent or printed', async () => {
    const before = emu.record.requests.length;
    for (const argv of [
      ['connections', 'list', '--env', emu.url, '--sort', 'name:up', '--format', 'csv'],
      ['cases', 'list', '--env', emu.url, '--sort', 'caseId:up', '--format', 'csv'],
    ]) {
      const run = await cli(argv);
      expect(run.exitCode).toBe(2);
      expect(run.stdout).toBe('');
      expect(expectOneErrorLine(run)).toContain(
        'Expected --sort to be FIELD, FIELD:asc or FIELD:desc, got "',
      );
    }
    expect(emu.record.requests.length).toBe(before);
    const desc = await cli([
      'connections',
      'list',
      '--env',
      emu.url,
      '--sort',
      'name:DESC',
      '--format',
      'ndjson',
    ]);
    expect(desc.exitCode).toBe(0);
    const names = desc.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { name: string }).name);
    expect(names).toEqual([...names].sort().reverse());
  });

  it('a CSV whose first page fails leaves stdout empty (no orphan header)', async () => {
    for (const argv of [
      ['connections', 'list', '--env', emu.url, '--format', 'csv'],
      ['cases', 'list', '--env', emu.url, '--format', 'csv'],
    ]) {
      const run = await cli(argv, { DDS_TOKEN: 'wrong-token' });
      expect(run.exitCode).toBe(4);
      expect(run.stdout).toBe('');
      expectOneErrorLine(run);
    }
  });
});

describe('--json gives exactly one JSON document on stdout', () => {
  const docs: [string, string[]][] = [
    ['connections list', ['connections', 'list', '--env', 'URL', '--type', 's3', '--json']],
    ['cases list', ['cases', 'list', '--env', 'URL', '--status', 'open', '--json']],
    ['cases list -o', ['cases', 'list', '--env', 'URL', '--status', 'open', '--json', '-o', 'open.csv']],
    [
      'cases update --dry-run',
      [
        'cases',
        'update',
        '--env',
        'URL',
        '--where',
        'caseStatus=open',
        '--set',
        'assignee=bob',
        '--dry-run',
        '--json',
      ],
    ],
    ['profiles get', ['profiles', 'get', '66b2a0d1c3e4f5a6b7c8d901', '--env', 'URL', '--json']],
    ['export', ['export', '--from', 'URL', '--type', 's3', '-o', 'json.snapshot.jsonl', '--json']],
  ];
  it.each(docs)('%s', async (_name, argv) => {
    const run = await cli(argv.map((a) => (a === 'URL' ? emu.url : a)));
    expect(run.exitCode, run.stderr).toBe(0);
    expect(() => JSON.parse(run.stdout)).not.toThrow();
  });

  it('cases list -o --json reports the file, its format and the count', async () => {
    const run = await cli([
      'cases',
      'list',
      '--env',
      emu.url,
      '--status',
      'open',
      '--json',
      '-o',
      'open.csv',
    ]);
    expect(run.exitCode).toBe(0);
    const doc = JSON.parse(run.stdout) as { path: string; format: string; count: number };
    expect(doc.path).toBe(join(dir, 'open.csv'));
    expect(doc.format).toBe('csv');
    expect(doc.count).toBeGreaterThan(0);
  });

  it.each([
    [['connections', 'list', '--env', 'URL', '--json', '--format', 'csv'], 'csv'],
    [['cases', 'list', '--env', 'URL', '--json', '--format', 'ndjson'], 'ndjson'],
    [['diff', '--from', 'URL', '--to', 'URL', '--json', '--format', 'text'], 'text'],
  ])('--json with a non-JSON --format %j is a usage error, nothing sent', async (argv, format) => {
    const before = emu.record.requests.length;
    const run = await cli(argv.map((a) => (a === 'URL' ? emu.url : a)));
    expect(run.exitCode).toBe(2);
    expect(run.stdout).toBe('');
    expect(expectOneErrorLine(run)).toContain(`--json cannot be combined with --format ${format}`);
    expect(emu.record.requests.length).toBe(before);
  });
});

describe('environment and service errors: one line, the contract code', () => {
  it.each([
    [
      ['connections', 'list', '--env', 'prod', '--config', 'missing.json'],
      2,
      'Cannot read the config file missing.json',
    ],
    [['connections', 'list', '--env', 'prd'], 2, "Unknown environment 'prd'"],
    [['connections', 'list', '--env', 'prod'], 2, 'PROD_TOKEN'],
    [['connections', 'list', '--env', 'http://10.1.2.3:8080'], 2, 'plain http to 10.1.2.3:8080'],
  ])('%j', async (argv, code, expected) => {
    const run = await runCli(argv, { env: {}, cwd: dir });
    expect(run.exitCode).toBe(code);
    expect(expectOneErrorLine(run)).toContain(expected);
  });

  it('a protected environment without --confirm is refused (exit 3) before anything is sent', async () => {
    const before = emu.record.requests.length;
    const run = await cli(
      ['cases', 'resolve', '67c3b1e20000000000000001', '--env', 'vault', '--reason', 'test'],
      {
        VAULT_TOKEN: emu.token,
      },
    );
    expect(run.exitCode).toBe(3);
    expect(expectOneErrorLine(run)).toContain('--confirm vault');
    expect(emu.record.requests.length).toBe(before);
  });

  it('a rejected token is exit 4, a dead server exit 5, each one line', async () => {
    const rejected = await cli(['profiles', 'get', '66b2a0d1c3e4f5a6b7c8d901', '--env', emu.url], {
      DDS_TOKEN: 'wrong-token',
    });
    expect(rejected.exitCode).toBe(4);
    expect(expectOneErrorLine(rejected)).toContain('401');
    const port = await findClosedPort();
    const dead = await cli(['connections', 'list', '--env', `http://127.0.0.1:${port}`]);
    expect(dead.exitCode).toBe(5);
    expect(expectOneErrorLine(dead)).toContain(`127.0.0.1:${port}`);
  });

  it('the stack is shown only with --log-level debug', async () => {
    const run = await cli(['connections', 'list', '--env', emu.url, '--log-level', 'debug'], {
      DDS_TOKEN: 'wrong-token',
    });
    expect(run.exitCode).toBe(4);
    expect(run.stderr).toMatch(/AuthError: .*\n\s+at /);
  });
});

describe('files: one line, exit 2, nothing left behind', () => {
  async function listAll(folder: string): Promise<string[]> {
    return (await readdir(folder, { recursive: true })).map(String).sort();
  }

  it('export -o into a missing folder or under a file', async () => {
    await writeFile(join(dir, 'plain-file'), 'x');
    const before = await listAll(dir);
    const missing = await cli(['export', '--from', emu.url, '-o', 'no-such-dir/x.snapshot.jsonl']);
    expect(missing.exitCode).toBe(2);
    expect(expectOneErrorLine(missing)).toContain('no-such-dir does not exist');
    const underFile = await cli(['export', '--from', emu.url, '-o', 'plain-file/x.snapshot.jsonl']);
    expect(underFile.exitCode).toBe(2);
    expect(expectOneErrorLine(underFile)).toContain('plain-file is not a folder');
    expect(await listAll(dir)).toEqual(before);
  });

  it.runIf(process.platform === 'linux')(
    'export -o and cases list -o into a folder that cannot be written (not a bug, exit 2)',
    async () => {
      // /sys refuses new files even to root, so this holds whoever runs the tests.
      const exported = await cli(['export', '--from', emu.url, '-o', '/sys/x.snapshot.jsonl']);
      expect(exported.exitCode).toBe(2);
      expect(expectOneErrorLine(exported)).toContain('Cannot write in the folder /sys');
      const cases = await cli(['cases', 'list', '--env', emu.url, '-o', '/sys/cases.csv']);
      expect(cases.exitCode).toBe(2);
      expect(expectOneErrorLine(cases)).toContain('Cannot write /sys/cases.csv');
    },
  );

  it('cases list -o into a missing folder, and after a 401: no temporary file remains', async () => {
    await mkdir(join(dir, 'out'), { recursive: true });
    const missing = await cli(['cases', 'list', '--env', emu.url, '-o', 'nowhere/cases.csv']);
    expect(missing.exitCode).toBe(2);
    expectOneErrorLine(missing);
    const rejected = await cli(['cases', 'list', '--env', emu.url, '-o', 'out/cases.csv'], {
      DDS_TOKEN: 'wrong-token',
    });
    expect(rejected.exitCode).toBe(4);
    expectOneErrorLine(rejected);
    expect(await readdir(join(dir, 'out'))).toEqual([]);
  });

  it('--log-file in a missing folder is one usage line for any command, and paths are relative to the cwd', async () => {
    for (const argv of [
      ['connections', 'list', '--env', emu.url],
      ['cases', 'list', '--env', emu.url],
    ]) {
      const run = await cli([...argv, '--log-file', 'no-such-dir/run.log']);
      expect(run.exitCode).toBe(2);
      expect(expectOneErrorLine(run)).toContain(
        `Cannot write the log file ${join(dir, 'no-such-dir/run.log')}`,
      );
    }
    const ok = await cli(['connections', 'list', '--env', emu.url, '--type', 's3', '--log-file', 'run.log']);
    expect(ok.exitCode).toBe(0);
    expect((await readdir(dir)).includes('run.log')).toBe(true);
  });

  it('a damaged snapshot named relatively is reported as typed, by validate and by diff', async () => {
    await writeFile(join(dir, 'cut.snapshot.jsonl'), '{"kind":"dds-migrate/snapshot"');
    const validate = await cli(['validate', 'cut.snapshot.jsonl']);
    const diff = await cli(['diff', '--from', 'cut.snapshot.jsonl', '--to', emu.url]);
    for (const run of [validate, diff]) {
      expect(run.exitCode).toBe(2);
      expect(expectOneErrorLine(run)).toMatch(/^error: cut\.snapshot\.jsonl:1: /);
    }
  });

  it('emulator --data with a malformed seed file names the file once', async () => {
    await writeFile(join(dir, 'bad-seed.json'), '{bad');
    const run = await cli(['emulator', '--data', 'bad-seed.json']);
    expect(run.exitCode).toBe(2);
    const line = expectOneErrorLine(run);
    expect(line.split('bad-seed.json').length - 1).toBe(1);
  });
});
