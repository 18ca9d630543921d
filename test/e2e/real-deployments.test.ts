/**
 * The CLI against the emulator's deployment switches (api-notes), over real HTTP on loopback:
 * a token refused with HTTP 200 ([seen]), lists paged by `offset` or by nothing ([code]), cases whose
 * write id is a Mongo `_id` beside a friendly `caseId` ([docs]).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  generateCases,
  generateConnections,
  type RunningEmulator,
  startEmulator,
} from '../../src/emulator/index.js';
import type { EmulatorOptions } from '../../src/emulator/types.js';
import { runCli } from '../helpers/run-cli.js';
import { writeSnapshotFile } from '../helpers/snapshot-file.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const WRONG = 'not-the-token-7d41c9e2';
const started: RunningEmulator[] = [];

afterEach(async () => {
  await Promise.all(started.splice(0).map((e) => e.close()));
});

async function emulator(options: EmulatorOptions): Promise<RunningEmulator> {
  const emu = await startEmulator({ port: 0, ...options });
  started.push(emu);
  return emu;
}

function ndjson(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('a token refused with HTTP 200 {"success":false} (--auth-refusal 200)', () => {
  const commands: readonly [string, (url: string, dir: string) => Promise<string[]>, string][] = [
    [
      'connections list',
      async (url) => ['connections', 'list', '--env', url, '--format', 'ndjson'],
      'DDS_TOKEN',
    ],
    [
      'export',
      async (url, dir) => ['export', '--from', url, '-o', join(dir, 'out.snapshot.jsonl')],
      'DDS_SOURCE_TOKEN',
    ],
    ['cases list', async (url) => ['cases', 'list', '--env', url, '--format', 'ndjson'], 'DDS_TOKEN'],
    ['profiles list', async (url) => ['profiles', 'list', '--env', url, '--format', 'ndjson'], 'DDS_TOKEN'],
    [
      'import --dry-run',
      async (url, dir) => {
        const file = join(dir, 'in.snapshot.jsonl');
        await writeSnapshotFile(file, generateConnections(3, { seed: 3 }));
        return ['import', file, '--to', url, '--dry-run'];
      },
      'DDS_TARGET_TOKEN',
    ],
  ];

  for (const [name, argv, variable] of commands) {
    it(`${name}: exit 4, one line naming ${variable}, no token printed, no request after the refusal`, async () => {
      const emu = await emulator({
        authRefusal: 200,
        data: { connections: generateConnections(5, { seed: 1 }), cases: generateCases(5) },
      });
      const dir = await makeTempDir('refusal-');
      const run = await runCli(await argv(emu.url, dir), {
        env: { [variable]: WRONG },
        cwd: dir,
      });
      expect(run.exitCode).toBe(4);
      const lines = run.stderr.trimEnd().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`Check the token in ${variable}`);
      expect(lines[0]).toContain('Failed to authenticate token.');
      expect(run.stdout + run.stderr).not.toContain(WRONG);
      // Every request was refused; none was retried (a page asked for ahead may be in flight at most).
      const requests = emu.record.requests;
      expect(requests.length).toBeGreaterThan(0);
      expect(requests.length).toBeLessThanOrEqual(2);
      expect(requests.every((r) => r.status === 200)).toBe(true);
      expect(emu.record.changes).toEqual([]);
    });
  }

  it('names the tokenEnv of a configured environment', async () => {
    const emu = await emulator({ authRefusal: 200 });
    const dir = await makeTempDir('refusal-config-');
    const config = join(dir, 'dds-migrate.config.json');
    await import('node:fs/promises').then((fs) =>
      fs.writeFile(
        config,
        JSON.stringify({ environments: { prod: { url: emu.url, tokenEnv: 'PROD_DDS_TOKEN' } } }),
      ),
    );
    const run = await runCli(['connections', 'list', '--env', 'prod', '--config', config], {
      env: { PROD_DDS_TOKEN: WRONG },
      cwd: dir,
    });
    expect(run.exitCode).toBe(4);
    expect(run.stderr).toContain('Check the token in PROD_DDS_TOKEN (tokenEnv of prod)');
    expect(run.stderr).not.toContain(WRONG);
  });

  it('the right token still works against the same emulator', async () => {
    const emu = await emulator({
      authRefusal: 200,
      data: { connections: generateConnections(5, { seed: 1 }) },
    });
    const run = await runCli(['connections', 'list', '--env', emu.url, '--format', 'ndjson'], {
      env: { DDS_TOKEN: emu.token },
    });
    expect(run.exitCode).toBe(0);
    expect(ndjson(run.stdout)).toHaveLength(5);
  });
});

describe('lists paged by offset only (--paging offset, pages of 50)', () => {
  it('cases list of 250 cases gives every case exactly once', async () => {
    const emu = await emulator({ paging: 'offset', maxPageSize: 50, data: { cases: generateCases(250) } });
    const run = await runCli(['cases', 'list', '--env', emu.url, '--format', 'ndjson'], {
      env: { DDS_TOKEN: emu.token },
    });
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    const ids = ndjson(run.stdout).map((c) => String(c.caseId));
    expect(ids).toHaveLength(250);
    expect(new Set(ids)).toEqual(new Set(emu.store.cases.map((c) => String(c.caseId))));
  });

  it('connections list of 230 gives every connection exactly once', async () => {
    const all = generateConnections(230, { seed: 5 });
    const emu = await emulator({ paging: 'offset', maxPageSize: 50, data: { connections: all } });
    const run = await runCli(['connections', 'list', '--env', emu.url, '--format', 'ndjson'], {
      env: { DDS_TOKEN: emu.token },
    });
    expect(run.exitCode).toBe(0);
    const names = ndjson(run.stdout).map((c) => String(c.name));
    expect(names).toHaveLength(230);
    expect(new Set(names)).toEqual(new Set(all.map((c) => c.name)));
  });

  it('an export reads the whole list by offset too', async () => {
    const all = generateConnections(120, { seed: 6 });
    const emu = await emulator({ paging: 'offset', maxPageSize: 50, data: { connections: all } });
    const dir = await makeTempDir('offset-export-');
    const out = join(dir, 'x.snapshot.jsonl');
    const run = await runCli(['export', '--from', emu.url, '--type', 's3', '-o', out], {
      env: { DDS_SOURCE_TOKEN: emu.token },
    });
    expect(run.exitCode).toBe(0);
    const lines = (await readFile(out, 'utf8')).trimEnd().split('\n');
    expect(lines.length - 2).toBe(all.filter((c) => c.type === 's3').length);
  });

  it('a service whose pages repeat forever (--paging none) ends with exit 5 and one line', async () => {
    const emu = await emulator({ paging: 'none', maxPageSize: 50, data: { cases: generateCases(250) } });
    const run = await runCli(['cases', 'list', '--env', emu.url, '--format', 'ndjson'], {
      env: { DDS_TOKEN: emu.token },
    });
    expect(run.exitCode).toBe(5);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/honours neither skip nor offset/);
    expect(emu.record.requests.length).toBeLessThanOrEqual(3);
  });
});

describe('cases with a Mongo _id beside a friendly caseId (--case-ids mongo)', () => {
  const dspm = {
    _id: '65f0c0ffee00000000000009',
    caseId: 'SPC-900',
    id: 'dspm-900',
    caseStatus: 'open',
    policyName: 'P',
    ticketMetadata: { ticketUrl: 'Creation Failed' },
    oddField: ['kept', { as: 'is' }],
  };

  async function mongoEmulator(): Promise<RunningEmulator> {
    return emulator({ caseIds: 'mongo', data: { cases: [...generateCases(6), dspm] } });
  }

  it('cases list shows the write id first and the friendly caseId beside it; JSON holds every field verbatim', async () => {
    const emu = await mongoEmulator();
    const csv = await runCli(['cases', 'list', '--env', emu.url, '--format', 'csv'], {
      env: { DDS_TOKEN: emu.token },
    });
    expect(csv.exitCode).toBe(0);
    const rows = csv.stdout.trimEnd().split('\n');
    expect(rows[0]).toMatch(/^writeId,caseId,caseStatus/);
    expect(rows[1]).toMatch(/^ca5e0{20},SPC-1,/);
    const json = await runCli(['cases', 'list', '--env', emu.url, '--format', 'ndjson'], {
      env: { DDS_TOKEN: emu.token },
    });
    const listed = ndjson(json.stdout).find((c) => c._id === dspm._id);
    expect(listed).toEqual(dspm);
    const picked = await runCli(
      ['cases', 'list', '--env', emu.url, '--fields', 'writeId,caseId', '--format', 'ndjson'],
      { env: { DDS_TOKEN: emu.token } },
    );
    expect(ndjson(picked.stdout).at(-1)).toEqual({ writeId: dspm._id, caseId: 'SPC-900' });
  });

  for (const [form, given] of [
    ['_id', 'ca5e00000000000000000002'],
    ['caseId', 'SPC-3'],
    ['id', 'dspm-900'],
  ] as const) {
    it(`cases resolve by ${form} sends one PATCH, to the _id`, async () => {
      const emu = await mongoEmulator();
      // SPC-3 is the third case: its _id is the generated id of index 2.
      const expected = form === 'id' ? dspm._id : 'ca5e00000000000000000002';
      const dry = await runCli(
        ['cases', 'resolve', given, '--env', emu.url, '--reason', 'test', '--dry-run'],
        {
          env: { DDS_TOKEN: emu.token },
        },
      );
      expect(dry.exitCode).toBe(0);
      expect(dry.stdout).toContain(`would resolve  ${expected}  (`);
      expect(dry.stdout).toContain(`found by ${form}`);
      expect(emu.record.requests.filter((r) => r.method === 'PATCH')).toEqual([]);
      emu.record.reset();
      const run = await runCli(['cases', 'resolve', given, '--env', emu.url, '--reason', 'test'], {
        env: { DDS_TOKEN: emu.token },
      });
      expect(run.exitCode).toBe(0);
      const patches = emu.record.requests.filter((r) => r.method === 'PATCH');
      expect(patches.map((r) => r.path)).toEqual([`/api/v1/actionable-insights/case-status/${expected}`]);
      expect(emu.store.getCase(expected)?.caseStatus).toBe('resolved');
      expect(run.stdout).toMatch(new RegExp(`^resolved  ${expected}`));
    });
  }

  it('an id no look-up finds is sent as given and the service says it does not know it (exit 1)', async () => {
    const emu = await mongoEmulator();
    const run = await runCli(['cases', 'resolve', 'SPC-404', '--env', emu.url, '--reason', 'test'], {
      env: { DDS_TOKEN: emu.token },
    });
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain('failed    SPC-404  (not found by caseId, id, _id: sent as given)');
  });

  it('--status closed is accepted', async () => {
    const emu = await mongoEmulator();
    const run = await runCli(
      ['cases', 'list', '--env', emu.url, '--status', 'closed', '--format', 'ndjson'],
      {
        env: { DDS_TOKEN: emu.token },
      },
    );
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe('');
  });
});
