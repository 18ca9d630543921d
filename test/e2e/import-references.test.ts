/**
 * References, end to end: the CLI imports prod's snapshot into the DR fixture, which
 * lacks the `eu-scanners` group and the `svc-fileshare-scan` stored credential on purpose.
 * - the pre-flight refuses with the list (exit 3, zero writes), and `--dry-run` shows the same problems;
 * - overrides apply first: an overridden `scanner_group` / `credential_id` is what gets checked;
 * - a target answering 404 to the look-ups: the import goes on, with "could not be checked" warnings;
 * - `defaultScanProfileId` / `defaultScanId` never reach the target unmapped.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import type { Connection } from '../../src/model/connection.js';
import { fixturesDir } from '../../src/paths.js';
import { clearRegisteredSecrets } from '../../src/secrets.js';
import { runCli } from '../helpers/run-cli.js';
import { countCreatePosts, prepareImportSource, targetReferences, writeSnapshot } from './import.helpers.js';

const drFixture = join(fixturesDir(), 'environments', 'dr-partial.json');

describe('import: references the target must hold', () => {
  let source: RunningEmulator;
  let dir: string;
  let snapshot: string;
  let entries: Connection[];
  let overridesPath: string;
  let secretEnv: Record<string, string>;
  let target: RunningEmulator | undefined;

  beforeAll(async () => {
    ({ source, dir, snapshot, entries, overridesPath, secretEnv } =
      await prepareImportSource('import-refs-'));
  });
  afterAll(async () => {
    await source.close();
  });
  afterEach(async () => {
    await target?.close();
    target = undefined;
    clearRegisteredSecrets();
  });

  const run = (emu: RunningEmulator, overrides: string, ...extra: string[]) =>
    runCli(
      [
        'import',
        snapshot,
        '--to',
        emu.url,
        '--overrides',
        overrides,
        '--journal',
        join(dir, `j-${Math.random().toString(36).slice(2)}.jsonl`),
        ...extra,
      ],
      { env: { DDS_TARGET_TOKEN: emu.token, ...secretEnv } },
    );

  /** The entries the DR site lacks, and which of them name the missing group or credential. */
  const missingFromDr = async () => {
    const dr = JSON.parse(await readFile(drFixture, 'utf8')) as { connections: Connection[] };
    const inDr = new Set(dr.connections.map((c) => c.name));
    const sent = entries.filter((e) => !inDr.has(e.name));
    return {
      euGroup: sent.filter((e) => e.scanner_group === 'eu-scanners').map((e) => e.name),
      fileshare: sent
        .filter((e) => e.credential_id === 'svc-fileshare-scan' && e.is_credential === true)
        .map((e) => e.name),
    };
  };

  it('refuses with the list of entries and references the target lacks: exit 3, zero writes', async () => {
    const { euGroup, fileshare } = await missingFromDr();
    expect(euGroup.length).toBeGreaterThan(0);
    expect(fileshare.length).toBeGreaterThan(0);
    target = await startEmulator({ data: drFixture });
    const before = target.store.connections.length;

    const result = await run(target, overridesPath);
    expect(result.exitCode, result.stderr).toBe(3);
    expect(countCreatePosts(target)).toBe(0);
    expect(target.record.requests.filter((r) => r.method !== 'GET')).toHaveLength(0);
    expect(target.store.connections).toHaveLength(before);
    for (const name of euGroup) {
      expect(result.stderr).toContain(
        `${name} /scanner_group: scanner group "eu-scanners" has no scanner in the target`,
      );
    }
    for (const name of fileshare) {
      expect(result.stderr).toContain(
        `${name} /credential_id: stored credential "svc-fileshare-scan" does not exist in the target`,
      );
    }
    expect(result.stderr).toMatch(/Create the missing scanner groups or stored credentials in the target/);

    // --dry-run shows the same problems (and exit 3), sending nothing.
    const dry = await run(target, overridesPath, '--dry-run', '--json');
    expect(dry.exitCode).toBe(3);
    const plan = JSON.parse(dry.stdout) as { problems: { entry: string; path: string; message: string }[] };
    const refs = plan.problems.filter((p) => p.path === '/scanner_group' || p.path === '/credential_id');
    expect(refs.filter((p) => p.path === '/scanner_group').map((p) => p.entry)).toEqual(
      expect.arrayContaining(euGroup),
    );
    expect(refs.filter((p) => p.path === '/credential_id').map((p) => p.entry)).toEqual(
      expect.arrayContaining(fileshare),
    );
    expect(countCreatePosts(target)).toBe(0);
  });

  it('checks what the overrides set: an overridden group and credential the target holds pass', async () => {
    const { fileshare } = await missingFromDr();
    const base = JSON.parse(await readFile(overridesPath, 'utf8')) as {
      byName: Record<string, Record<string, unknown>>;
    };
    for (const name of fileshare)
      base.byName[name] = { ...base.byName[name], credential_id: 'svc-db-readonly' };
    const fixed = join(dir, 'overrides-dr.json');
    await writeFile(fixed, JSON.stringify({ all: { scanner_group: 'dr-scanners' }, ...base }), {
      mode: 0o600,
    });
    target = await startEmulator({ data: drFixture });

    const result = await run(target, fixed);
    expect(result.exitCode, result.stderr).toBe(0);
    for (const name of fileshare) {
      expect(target.store.getConnection(name)?.credential_id).toBe('svc-db-readonly');
      expect(target.store.getConnection(name)?.scanner_group).toBe('dr-scanners');
    }
  });

  it('a target answering 404 to the look-ups: the import goes on, warning that they could not be checked', async () => {
    target = await startEmulator({ data: drFixture, referencesApi: false });
    const before = target.store.connections.length;

    const result = await run(target, overridesPath);
    expect(result.exitCode, result.stderr).toBe(0);
    expect(target.store.connections.length).toBeGreaterThan(before);
    expect(result.stderr).toMatch(
      /warning: scanner groups could not be checked \(the target does not list scanners\): it must hold .*eu-scanners/,
    );
    expect(result.stderr).toMatch(
      /warning: stored credentials could not be checked \(the target does not list credentials\): it must hold .*svc-fileshare-scan/,
    );
  });

  it('validate --templates-from E checks the references against E too (404: a warning)', async () => {
    const { euGroup, fileshare } = await missingFromDr();
    target = await startEmulator({ data: drFixture });
    const checked = await runCli(['validate', snapshot, '--templates-from', target.url], {
      env: { DDS_TOKEN: target.token },
    });
    expect(checked.exitCode, checked.stderr).toBe(3);
    // Every entry naming the group is listed (validate checks the whole snapshot, not only the creates).
    for (const name of euGroup) {
      expect(checked.stdout).toContain(`${name} /scanner_group: scanner group "eu-scanners" has no scanner`);
    }
    for (const name of fileshare) {
      expect(checked.stdout).toContain(`${name} /credential_id: stored credential "svc-fileshare-scan"`);
    }
    expect(checked.stdout).toMatch(/missing references\n$/);
    await target.close();

    target = await startEmulator({ data: drFixture, referencesApi: false });
    const unchecked = await runCli(['validate', snapshot, '--templates-from', target.url, '--json'], {
      env: { DDS_TOKEN: target.token },
    });
    expect(unchecked.exitCode, unchecked.stderr).toBe(0);
    const report = JSON.parse(unchecked.stdout) as {
      referenceProblems: unknown[];
      referenceWarnings: string[];
    };
    expect(report.referenceProblems).toEqual([]);
    expect(report.referenceWarnings[0]).toMatch(/^scanner groups could not be checked/);
  });

  it('defaultScanProfileId / defaultScanId never reach the target unmapped; certificates are a warning', async () => {
    const carrying: Connection[] = [
      {
        name: 'with-source-ids',
        type: 'rdb-mysql',
        rdb_url: 'db.example.com:3306',
        rdb_name: 'app',
        username: 'svc',
        password: 'pw-with-source-ids-1',
        scanner_group: 'default',
        defaultScanProfileId: '639f6ee7367a3ecf83777fab',
        defaultScanId: '639f6ee7367a3ecf83777fe7',
        certificate_id: 'corp-root-ca',
        is_certificate: true,
      },
    ];
    const path = join(dir, 'source-ids.snapshot.jsonl');
    await writeSnapshot(path, carrying, 'https://old-prod.example.com');
    target = await startEmulator({ data: { connections: [], ...targetReferences() } });

    const result = await runCli(
      ['import', path, '--to', target.url, '--journal', join(dir, 'source-ids.journal.jsonl')],
      { env: { DDS_TARGET_TOKEN: target.token } },
    );
    expect(result.exitCode, result.stderr).toBe(0);
    const stored = target.store.getConnection('with-source-ids') as Record<string, unknown>;
    expect(stored).not.toHaveProperty('defaultScanProfileId');
    expect(stored).not.toHaveProperty('defaultScanId');
    expect(stored.certificate_id).toBe('corp-root-ca');
    expect(JSON.stringify(stored)).not.toContain('639f6ee7367a3ecf83777f');
    expect(result.stderr).toContain('warning: defaultScanProfileId dropped from 1 entry (with-source-ids)');
    expect(result.stderr).toContain('warning: defaultScanId dropped from 1 entry (with-source-ids)');
    expect(result.stderr).toContain(
      'warning: certificates must exist in the target, cannot be checked: corp-root-ca (with-source-ids)',
    );
  });
});
