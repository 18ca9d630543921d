import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { MAX_WARNING_EXAMPLES } from '../../src/cli/warnings.js';
import type { Connection } from '../../src/model/connection.js';
import { fixturesDir } from '../../src/paths.js';
import { createSnapshotHeader } from '../../src/snapshot/format.js';
import { writeSnapshot } from '../../src/snapshot/write.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let dir: string;
const header = createSnapshotHeader({
  tool: 'dds-migrate 0.1.0',
  source: { url: 'https://prod.example.com', environment: 'prod' },
});

async function snapshotOf(scenario: string): Promise<string> {
  const entries = JSON.parse(
    await readFile(join(fixturesDir(), 'validate', scenario, 'entries.json'), 'utf8'),
  ) as Connection[];
  const path = join(dir, `${scenario}.snapshot.jsonl`);
  await writeSnapshot({ path }, header, entries);
  return path;
}

beforeAll(async () => {
  dir = await makeTempDir('dds-validate-cli-');
});

describe('validate (text output)', () => {
  it('lists each invalid entry on stdout as name (type) pointer: message, exit 3', async () => {
    const run = await runCli(['validate', await snapshotOf('002-missing-mandatory')]);
    expect(run.exitCode).toBe(3);
    expect(run.stdout.split('\n')).toEqual([
      'sales-mysql (rdb-mysql) /rdb_url: must not be empty',
      'sales-smb (smb) /sharedResource: is required',
      'References: the target must hold: scanner groups default; stored credentials 1 (checked by import)',
      '4 entries checked: 2 invalid (2 problems)',
      '',
    ]);
  });

  it('puts masked-secret warnings on stderr with a summary by field, exit 0', async () => {
    const run = await runCli(['validate', await snapshotOf('003-masked-secret')]);
    expect(run.exitCode).toBe(0);
    expect(run.stdout.split('\n').at(-2)).toBe('2 entries checked: all valid');
    expect(run.stderr).toMatch(
      /^warning: must be supplied at import: 4 times \(e\.g\. .*; --verbose lists all\); 2 entries \(aws_access_key: 1, aws_secret_key: 1, custom_fields\/\*\/field_value: 1, password: 1\); 'dds-migrate overrides init' writes an overrides file for them\n$/,
    );
  });

  it('says once what the target must hold (scanner groups, stored credentials, certificates); --json per entry', async () => {
    const entries: Connection[] = [
      { name: 'a', type: 'kafka', scanner_group: 'eu-scanners', credential_id: 'svc-x', is_credential: true },
      {
        name: 'b',
        type: 'kafka',
        scanner_group: 'eu-scanners',
        credential_id: 'svc-x',
        is_credential: 'true',
      },
      { name: 'c', type: 'kafka', credential_id: 'unused', is_credential: false, certificate_id: 'root-ca' },
      {
        name: 'd',
        type: 'kafka',
        scanner_group: '',
        credential_id: '',
        is_certificate: 'false',
        certificate_id: 'x',
      },
    ];
    const path = join(dir, 'references.snapshot.jsonl');
    await writeSnapshot({ path }, header, entries);
    const run = await runCli(['validate', path]);
    expect(run.exitCode).toBe(0);
    const lines = run.stdout.split('\n').filter((l) => l.startsWith('References:'));
    expect(lines).toEqual([
      'References: the target must hold: scanner groups default, eu-scanners; stored credentials svc-x; certificates root-ca (checked by import)',
    ]);
    const json = JSON.parse((await runCli(['validate', path, '--json'])).stdout);
    expect(json.references).toEqual({
      scannerGroups: { default: ['c', 'd'], 'eu-scanners': ['a', 'b'] },
      credentials: { 'svc-x': ['a', 'b'] },
      certificates: { 'root-ca': ['c'] },
    });
  });

  it('collapses a repeated warning into one line with a count and examples (--verbose: all; --json: all)', async () => {
    const entries: Connection[] = [];
    for (let i = 0; i < 25; i++) entries.push({ name: `k-${String(i).padStart(2, '0')}`, type: 'kafka' });
    const path = join(dir, 'many.snapshot.jsonl');
    await writeSnapshot({ path }, header, entries);
    const run = await runCli(['validate', path]);
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toBe(
      'warning: no template schema for type "kafka": checked against connection.schema.json only: 25 times (e.g. k-00 /type; k-01 /type; k-02 /type; --verbose lists all)\n',
    );
    const verbose = await runCli(['validate', path, '--verbose']);
    expect(verbose.stderr.trim().split('\n')).toHaveLength(25);
    const quiet = await runCli(['validate', path, '--quiet']);
    expect(quiet.stderr).toBe('');
    expect(quiet.stdout).toBe(
      'References: the target must hold: scanner groups default (checked by import)\n25 entries checked: all valid\n',
    );
    const json = await runCli(['validate', path, '--json']);
    expect(JSON.parse(json.stdout).warnings).toHaveLength(25);
    expect(json.stderr).toBe('');
  });

  it(`prints a group of up to ${MAX_WARNING_EXAMPLES} warnings in full`, async () => {
    const path = join(dir, 'few.snapshot.jsonl');
    await writeSnapshot({ path }, header, [
      { name: 'k-1', type: 'kafka' },
      { name: 'k-2', type: 'kafka' },
    ]);
    const run = await runCli(['validate', path]);
    expect(run.stderr.trim().split('\n')).toEqual([
      'warning: k-1 (kafka) /type: no template schema for type "kafka": checked against connection.schema.json only',
      'warning: k-2 (kafka) /type: no template schema for type "kafka": checked against connection.schema.json only',
    ]);
  });

  it('refuses --schemas with --templates-from, and a missing file (exit 2)', async () => {
    const path = await snapshotOf('001-valid');
    const both = await runCli(['validate', path, '--schemas', dir, '--templates-from', 'prod']);
    expect(both.exitCode).toBe(2);
    const missing = await runCli(['validate', join(dir, 'nope.snapshot.jsonl')]);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toMatch(/nope\.snapshot\.jsonl: no such file/);
  });

  it('reads a path relative to the cwd of the run, and names it as typed', async () => {
    await snapshotOf('001-valid');
    const ok = await runCli(['validate', '001-valid.snapshot.jsonl'], { cwd: dir });
    expect(ok.exitCode).toBe(0);
    const missing = await runCli(['validate', 'nope.snapshot.jsonl'], { cwd: dir });
    expect(missing.stderr).toBe(
      'error: nope.snapshot.jsonl: no such file. Give a file written by `dds-migrate export`\n',
    );
  });

  it('--schemas DIR replaces the shipped schemas', async () => {
    const path = await snapshotOf('001-valid');
    const empty = await makeTempDir('dds-empty-schemas-');
    const run = await runCli(['validate', path, '--schemas', empty, '--json']);
    expect(run.exitCode).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.warnings.map((w: { kind: string }) => w.kind)).toEqual([
      'unknown-type',
      'unknown-type',
      'unknown-type',
    ]);
  });
});
