import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EmulatorOptions, RunningEmulator } from '../../src/emulator/index.js';
import { runCli } from '../helpers/run-cli.js';
import { useProdE2e } from './prod-e2e.js';

const e2e = useProdE2e('cases-e2e-');

/** A fresh emulator with prod's data; pages clamped to 50 so every list crosses pages. */
function emulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  return e2e.start({ data: e2e.prod, maxPageSize: 50, ...options });
}

function cli(emu: RunningEmulator, argv: readonly string[], options: Parameters<typeof runCli>[1] = {}) {
  return runCli(argv, { env: { DDS_TOKEN: emu.token }, ...options });
}

/** `cases update --env URL ARGV` against `emu`. */
function casesUpdate(
  emu: RunningEmulator,
  argv: readonly string[],
  options: Parameters<typeof runCli>[1] = {},
) {
  return cli(emu, ['cases', 'update', '--env', emu.url, ...argv], options);
}

/** The PATCH requests `emu` has received. */
function patches(emu: RunningEmulator) {
  return emu.record.requests.filter((r) => r.method === 'PATCH');
}

function lines(text: string): Record<string, unknown>[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

function idsWhere(emu: RunningEmulator, pred: (c: Record<string, unknown>) => boolean): string[] {
  return emu.store.cases
    .filter(pred)
    .map((c) => String(c.caseId))
    .sort();
}

describe('cases list', () => {
  it('--status opn is refused before anything is sent, naming the closest status (exit 2)', async () => {
    const emu = await emulator();
    const run = await cli(emu, ['cases', 'list', '--env', emu.url, '--status', 'opn']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain(`got "opn" (did you mean 'open'?)`);
    expect(emu.record.requests).toHaveLength(0);
  });

  it('--status open --format ndjson prints exactly the open cases, across clamped pages', async () => {
    const emu = await emulator();
    const run = await cli(emu, ['cases', 'list', '--env', emu.url, '--status', 'open', '--format', 'ndjson']);
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    const printed = lines(run.stdout);
    const expected = idsWhere(emu, (c) => c.caseStatus === 'open');
    expect(expected.length).toBeGreaterThan(50);
    expect(printed.map((c) => c.caseId).sort()).toEqual(expected);
    expect(printed.every((c) => c.caseStatus === 'open')).toBe(true);
    const byId = new Map(emu.store.cases.map((c) => [c.caseId, c]));
    for (const c of printed) expect(c).toEqual(byId.get(String(c.caseId)));
  });

  it('combines --policy and --severity, and csv has a header and one row per case', async () => {
    const emu = await emulator();
    const policy = String(emu.store.cases[0]?.policyName);
    const run = await cli(emu, [
      'cases',
      'list',
      '--env',
      emu.url,
      '--policy',
      policy,
      '--severity',
      'HIGH,critical',
      '--format',
      'csv',
    ]);
    expect(run.exitCode).toBe(0);
    const rows = run.stdout.trimEnd().split('\n');
    expect(rows[0]).toBe(
      'writeId,caseId,caseStatus,severityLevel,policyName,dataSourceName,assignee,caseLabel',
    );
    const expected = idsWhere(
      emu,
      (c) => c.policyName === policy && ['high', 'critical'].includes(String(c.severityLevel)),
    );
    expect(expected.length).toBeGreaterThan(0);
    expect(
      rows
        .slice(1)
        .map((r) => r.split(',')[0])
        .sort(),
    ).toEqual(expected);
  });

  it('--fields and --sort choose and order the columns; -o FILE is written whole, mode 0600', async () => {
    const emu = await emulator();
    const out = join(e2e.dir, 'sorted.json');
    const run = await cli(emu, [
      'cases',
      'list',
      '--env',
      emu.url,
      '--fields',
      'caseId,severityLevel',
      '--sort',
      'caseId:desc',
      '-o',
      out,
    ]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toBe('');
    const written = JSON.parse(await readFile(out, 'utf8')) as Record<string, unknown>[];
    expect(written).toHaveLength(emu.store.cases.length);
    expect(Object.keys(written[0] ?? {})).toEqual(['caseId', 'severityLevel']);
    const ids = written.map((c) => String(c.caseId));
    expect(ids).toEqual([...ids].sort().reverse());
    expect((await stat(out)).mode & 0o777).toBe(0o600);
  });

  it('a dotted --fields path (ticketMetadata.ticketUrl, api-notes) is read from the nested object', async () => {
    const emu = await emulator();
    const first = emu.store.cases[0] as Record<string, unknown> | undefined;
    if (first === undefined) throw new Error('no case');
    first.ticketMetadata = { ticketUrl: 'Creation Failed', ticketId: 't-1' };
    const run = await cli(emu, [
      'cases',
      'list',
      '--env',
      emu.url,
      '--fields',
      'caseId,ticketMetadata.ticketUrl',
      '--format',
      'ndjson',
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    const rows = lines(run.stdout);
    expect(rows.find((r) => r.caseId === first.caseId)).toEqual({
      caseId: first.caseId,
      'ticketMetadata.ticketUrl': 'Creation Failed',
    });
    expect(rows.filter((r) => r['ticketMetadata.ticketUrl'] !== undefined)).toHaveLength(1);
  });

  it('refuses a --filter that is not JSON before sending anything (exit 2)', async () => {
    const emu = await emulator();
    const run = await cli(emu, ['cases', 'list', '--env', emu.url, '--filter', '{caseStatus: open}']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/--filter to be JSON/);
    expect(emu.record.requests).toEqual([]);
  });
});

describe('cases resolve', () => {
  it('resolves each case with the reason recorded, one PATCH per case', async () => {
    const emu = await emulator();
    const open = emu.store.cases
      .filter((c) => c.caseStatus === 'open')
      .slice(0, 3)
      .map((c) => String(c.caseId));
    const run = await cli(emu, [
      'cases',
      'resolve',
      open.join(','),
      '--env',
      emu.url,
      '--reason',
      '  false positive: test data ',
    ]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout.trim().split('\n')).toEqual(open.map((id) => `resolved  ${id}`));
    for (const id of open) expect(emu.store.getCase(id)?.caseStatus).toBe('resolved');
    const audit = emu.store.caseAudit.filter((a) => a.via === 'case-status');
    expect(audit.map((a) => [a.caseId, a.to, a.reason])).toEqual(
      open.map((id) => [id, 'resolved', 'false positive: test data']),
    );
    expect(patches(emu)).toHaveLength(3);
  });

  it('reports a failed case with the service message and exits 1, the others still resolved', async () => {
    const emu = await emulator();
    const id = emu.store.cases[0]?.caseId as string;
    const run = await cli(emu, [
      'cases',
      'resolve',
      `${id},no-such-case`,
      '--env',
      emu.url,
      '--reason',
      'done',
    ]);
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain(`resolved  ${id}`);
    expect(run.stdout).toMatch(/failed {4}no-such-case .*404.*not found/);
    expect(run.stderr).toMatch(/error: 1 of 2 case\(s\) could not be resolved/);
    expect(emu.store.getCase(id)?.caseStatus).toBe('resolved');
  });

  it('refuses an empty --reason (exit 2) and sends nothing', async () => {
    const emu = await emulator();
    const run = await cli(emu, ['cases', 'resolve', 'a,b', '--env', emu.url, '--reason', '   ']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/--reason/);
    const twice = await cli(emu, [
      'cases',
      'resolve',
      'a',
      '--env',
      emu.url,
      '--reason',
      'x',
      '--reason',
      'y',
    ]);
    expect(twice.exitCode).toBe(2);
    expect(twice.stderr).toMatch(/--reason .*2 values \(give it once\)/);
    expect(emu.record.requests).toEqual([]);
  });
});

describe('cases update', () => {
  const policyOf = (emu: RunningEmulator) =>
    String(emu.store.cases.find((c) => c.caseStatus === 'open')?.policyName);

  it('resolves exactly the cases matching every --where, and prints their ids', async () => {
    const emu = await emulator();
    const policy = policyOf(emu);
    const expected = idsWhere(emu, (c) => c.policyName === policy && c.caseStatus === 'open');
    const untouched = emu.store.cases
      .filter((c) => !expected.includes(String(c.caseId)))
      .map((c) => [c.caseId, c.caseStatus]);
    const audit = join(e2e.dir, 'audit.jsonl');
    const run = await casesUpdate(emu, [
      '--where',
      `policyName=${policy}`,
      '--where',
      'caseStatus=open',
      '--set',
      'caseStatus=resolved',
      '--yes',
      '--audit',
      audit,
    ]);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).not.toMatch(/warning/);
    expect(run.stdout.trim().split('\n').sort()).toEqual(expected);
    for (const id of expected) expect(emu.store.getCase(id)?.caseStatus).toBe('resolved');
    expect(
      emu.store.cases
        .filter((c) => !expected.includes(String(c.caseId)))
        .map((c) => [c.caseId, c.caseStatus]),
    ).toEqual(untouched);
    expect(patches(emu)).toHaveLength(1);

    const records = lines(await readFile(audit, 'utf8'));
    const matched = records.filter((r) => r.event === 'matched');
    expect(matched.map((r) => r.caseId).sort()).toEqual(expected);
    expect(matched.every((r) => (r.before as Record<string, unknown>).caseStatus === 'open')).toBe(true);
    const done = records.filter((r) => r.event === 'updated');
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({
      change: { field: 'caseStatus', newValue: 'resolved' },
      matched: expected.length,
      missing: [],
      unexpected: [],
    });
    expect([...((done[0]?.caseIds as string[] | undefined) ?? [])].sort()).toEqual(expected);
    expect(new Set(records.map((r) => r.runId)).size).toBe(1);
    expect((await stat(audit)).mode & 0o777).toBe(0o600);
  });

  it('cases that carry _id beside a friendly caseId: compared and audited by the id the writes take, no false warning', async () => {
    const emu = await emulator({ caseIds: 'mongo' });
    const policy = policyOf(emu);
    const open = emu.store.cases.filter((c) => c.policyName === policy && c.caseStatus === 'open');
    const expected = open.map((c) => String(c._id)).sort();
    expect(open.some((c) => c.caseId !== c._id)).toBe(true);
    const audit = join(e2e.dir, 'audit-mongo.jsonl');
    const run = await casesUpdate(emu, [
      '--where',
      `policyName=${policy}`,
      '--where',
      'caseStatus=open',
      '--set',
      'assignee=m@example.com',
      '--yes',
      '--audit',
      audit,
    ]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/warning/);
    const records = lines(await readFile(audit, 'utf8'));
    expect(
      records
        .filter((r) => r.event === 'matched')
        .map((r) => r.caseId)
        .sort(),
    ).toEqual(expected);
    expect(records.find((r) => r.event === 'updated')).toMatchObject({ missing: [], unexpected: [] });
  });

  it('--reason is kept on every line of the audit trail', async () => {
    const emu = await emulator();
    const policy = policyOf(emu);
    const audit = join(e2e.dir, 'audit-reason.jsonl');
    const run = await casesUpdate(emu, [
      '--where',
      `policyName=${policy}`,
      '--set',
      'assignee=alice',
      '--yes',
      '--reason',
      'handover to the DPO team',
      '--audit',
      audit,
    ]);
    expect(run.exitCode).toBe(0);
    const records = lines(await readFile(audit, 'utf8'));
    expect(records.length).toBeGreaterThan(1);
    expect(records.every((r) => r.reason === 'handover to the DPO team')).toBe(true);
  });

  it('a misspelt --where field warns with the closest known one; an unknown caseStatus value is refused', async () => {
    const emu = await emulator();
    const policy = policyOf(emu);
    const run = await casesUpdate(emu, ['--where', `policy=${policy}`, '--set', 'assignee=bob', '--dry-run']);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toMatch(/--where policy: not a case field .*did you mean 'policyName'\?/);
    const refused = await casesUpdate(emu, [
      '--where',
      'caseStatus=opn',
      '--set',
      'assignee=bob',
      '--dry-run',
    ]);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toContain(`did you mean 'open'?`);
    expect(emu.record.requests.filter((r) => r.path.includes('cases'))).toHaveLength(1);
  });

  it('--dry-run shows the count and a sample and sends no PATCH', async () => {
    const emu = await emulator();
    const policy = policyOf(emu);
    const count = idsWhere(emu, (c) => c.policyName === policy && c.caseStatus === 'open').length;
    const run = await casesUpdate(emu, [
      '--where',
      `policyName=${policy}`,
      '--where',
      'caseStatus=open',
      '--set',
      'assignee=alice',
      '--dry-run',
    ]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain(`${count} case(s) match`);
    expect(run.stdout.split('\n').filter((l) => /^[0-9a-f]{24}\s/.test(l))).toHaveLength(Math.min(5, count));
    expect(patches(emu)).toEqual([]);
  });

  it('refuses without --yes when not on a terminal (exit 3), nothing sent', async () => {
    const emu = await emulator();
    const run = await casesUpdate(emu, ['--where', 'caseStatus=open', '--set', 'caseStatus=resolved']);
    expect(run.exitCode).toBe(3);
    expect(run.stderr).toMatch(/refusing to update \d+ case\(s\) without --yes/);
    expect(patches(emu)).toEqual([]);
  });

  it('asks on a terminal: "y" updates, anything else does not', async () => {
    const emu = await emulator();
    const argv = ['--where', 'caseStatus=silenced', '--set', 'assignee=bob@example.com'];
    const no = await casesUpdate(emu, argv, { tty: true, stdinIsTTY: true, stdin: 'n\n' });
    expect(no.exitCode).toBe(3);
    expect(no.stderr).toMatch(/Update \d+ case\(s\)\? \[y\/N\]/);
    expect(patches(emu)).toEqual([]);
    const yes = await casesUpdate(emu, argv, { tty: true, stdinIsTTY: true, stdin: 'y\n' });
    expect(yes.exitCode).toBe(0);
    const silenced = idsWhere(emu, (c) => c.caseStatus === 'silenced');
    for (const id of silenced) expect(emu.store.getCase(id)?.assignee).toBe('bob@example.com');
  });

  it('zero matches: nothing sent, exit 0', async () => {
    const emu = await emulator();
    const run = await casesUpdate(emu, [
      '--where',
      'policyName=No Such Policy',
      '--set',
      'caseStatus=resolved',
      '--yes',
    ]);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toMatch(/nothing was sent/);
    expect(patches(emu)).toEqual([]);
  });

  it('refuses --set fields other than caseStatus and assignee (exit 2)', async () => {
    const emu = await emulator();
    const run = await casesUpdate(emu, ['--where', 'caseStatus=open', '--set', 'severityLevel=low', '--yes']);
    expect(run.exitCode).toBe(2);
    expect(emu.record.requests).toEqual([]);
  });

  it('a protected environment needs --confirm NAME (exit 3 without it)', async () => {
    const emu = await emulator();
    const config = join(e2e.dir, 'protected.config.json');
    await writeFile(
      config,
      JSON.stringify({ environments: { vault: { url: emu.url, tokenEnv: 'VAULT_TOKEN', protected: true } } }),
    );
    const argv = [
      'cases',
      'update',
      '--config',
      config,
      '--env',
      'vault',
      '--where',
      'caseStatus=silenced',
      '--set',
      'caseStatus=open',
      '--yes',
    ];
    const env = { VAULT_TOKEN: emu.token };
    const refused = await runCli(argv, { env });
    expect(refused.exitCode).toBe(3);
    expect(refused.stderr).toMatch(/protected.*--confirm vault/);
    expect(emu.record.requests).toEqual([]);
    const resolveRefused = await runCli(
      ['cases', 'resolve', 'x', '--config', config, '--env', 'vault', '--reason', 'r'],
      { env },
    );
    expect(resolveRefused.exitCode).toBe(3);
    // A dry run sends no write and says what the real run needs, as import's does.
    const dryUpdate = await runCli([...argv, '--dry-run'], { env });
    expect(dryUpdate.exitCode).toBe(0);
    expect(dryUpdate.stderr).toMatch(/vault is a protected environment: the real run needs --confirm vault/);
    // An unprotected one is not called protected, whatever --confirm says.
    const dryOpen = await casesUpdate(emu, [
      '--where',
      'caseStatus=silenced',
      '--set',
      'caseStatus=open',
      '--confirm',
      'prod',
      '--dry-run',
    ]);
    expect(dryOpen.exitCode).toBe(0);
    expect(dryOpen.stderr).not.toMatch(/protected/);
    const dryResolve = await runCli(
      [
        'cases',
        'resolve',
        String(emu.store.cases[0]?.caseId),
        '--config',
        config,
        '--env',
        'vault',
        '--reason',
        'r',
        '--dry-run',
        '--json',
      ],
      { env },
    );
    expect(dryResolve.exitCode, dryResolve.stderr).toBe(0);
    expect(JSON.parse(dryResolve.stdout)).toMatchObject({ dryRun: true, confirmRequired: 'vault' });
    expect(dryResolve.stderr).toMatch(/the real run needs --confirm vault/);
    expect(patches(emu)).toEqual([]);
    const allowed = await runCli([...argv, '--confirm', 'vault'], { env });
    expect(allowed.exitCode).toBe(0);
    expect(patches(emu)).toHaveLength(1);
  });
});
