// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:NAME}" is a literal overrides placeholder, not a template
/**
 * Real data end to end: the 20 connections a vendor sandbox answered (fixtures/recorded/sandbox-ds-connections,
 * source named in its README) go through list, export, validate, diff and import. Secrets are masked
 * as in the recording; the import gets them from an overrides file. Every non-server-managed field,
 * `scan_scope` included, must arrive verbatim.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stripServerManaged } from '../../src/connections/server-managed.js';
import { startEmulator } from '../../src/emulator/index.js';
import type { RunningEmulator } from '../../src/emulator/types.js';
import type { Connection } from '../../src/model/connection.js';
import { fixturesDir } from '../../src/paths.js';
import { clearRegisteredSecrets, MASK } from '../../src/secrets.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { targetReferences, writeSnapshot } from './import.helpers.js';

const RECORDED = join(fixturesDir(), 'recorded', 'sandbox-ds-connections', 'ds-connections.json');

let recorded: Record<string, unknown>[];
let source: RunningEmulator;
let dir: string;
let snapshot: string;

/** What the import must send for `entry`: masked secrets replaced by the overrides' values. */
function secretValue(name: string, field: string): string {
  return `real-${field}-of-${name}`.replace(/\s/g, '_');
}

beforeAll(async () => {
  const body = JSON.parse(await readFile(RECORDED, 'utf8')) as {
    data: { ds_connections: Record<string, unknown>[]; totalCount: number };
  };
  recorded = body.data.ds_connections;
  source = await startEmulator({ data: { connections: structuredClone(recorded) as Connection[] } });
  dir = await makeTempDir('dds-e2e-recorded-');
  snapshot = join(dir, 'sandbox.snapshot.jsonl');
});

afterAll(async () => {
  await source?.close();
  clearRegisteredSecrets();
});

describe('recorded sandbox connections', () => {
  it('holds the evidenced types and facts (guards the fixture itself)', () => {
    expect(recorded).toHaveLength(20);
    expect(new Set(recorded.map((c) => c.type))).toEqual(
      new Set(['smb', 'salesforce', 'rdb-mysql', 'mongodb', 'googledrive', 'generic-rest-api', 's3']),
    );
    const models = recorded.find((c) => c.name === 'Models') as Record<string, unknown>;
    expect(models).toMatchObject({ is_credential: true, credential_id: '1', smbServer: 'smb.mybigid.com' });
    expect(models).not.toHaveProperty('username');
    expect(recorded.find((c) => c.type === 'googledrive')?.scan_scope).toBe('myDrive');
  });

  it('lists, exports and validates with exit 0 against the shipped schemas', async () => {
    const env = { DDS_TOKEN: source.token, DDS_SOURCE_TOKEN: source.token };
    const list = await runCli(['connections', 'list', '--env', source.url, '--format', 'ndjson'], { env });
    expect(list.exitCode).toBe(0);
    expect(list.stdout.trim().split('\n')).toHaveLength(20);

    const exported = await runCli(['export', '--from', source.url, '-o', snapshot], { env, cwd: dir });
    expect(exported.exitCode).toBe(0);

    const run = await runCli(['validate', snapshot, '--json'], { env });
    const report = JSON.parse(run.stdout);
    expect(report.errors ?? [], run.stdout).toEqual([]);
    expect(run.exitCode).toBe(0);
    expect(report.entryCount).toBe(20);
  });

  it('validates with exit 0 against the target own templates (mandatory only where evidenced)', async () => {
    const run = await runCli(['validate', snapshot, '--templates-from', source.url, '--json'], {
      env: { DDS_TOKEN: source.token, DDS_SOURCE_TOKEN: source.token },
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
  });

  it('refuses, against the target templates, an entry that truly lacks a mandatory field, naming it', async () => {
    const entries = (await readFile(snapshot, 'utf8'))
      .split('\n')
      .slice(1, -2)
      .map((line) => JSON.parse(line) as Connection);
    const broken = entries.map((e) => {
      if (e.name !== 'Share') return e;
      const { sharedResource: _dropped, ...rest } = e as Record<string, unknown>;
      return rest as Connection;
    });
    const path = join(dir, 'broken.snapshot.jsonl');
    await writeSnapshot(path, broken, source.url);
    const run = await runCli(['validate', path, '--templates-from', source.url], {
      env: { DDS_TOKEN: source.token, DDS_SOURCE_TOKEN: source.token },
    });
    expect(run.exitCode).not.toBe(0);
    expect(run.stdout + run.stderr).toMatch(/Share[\s\S]*sharedResource/);
  });

  it('diff of the export against its own source finds nothing, scan_scope compared', async () => {
    const same = await runCli(['diff', '--from', snapshot, '--to', source.url, '--format', 'json'], {
      env: { DDS_SOURCE_TOKEN: source.token, DDS_TARGET_TOKEN: source.token },
    });
    expect(same.exitCode, same.stdout + same.stderr).toBe(0);

    const changed = await startEmulator({
      data: {
        connections: structuredClone(recorded).map((c) =>
          c.type === 'googledrive' ? { ...c, scan_scope: 'sharedDrives' } : c,
        ) as Connection[],
      },
    });
    try {
      const run = await runCli(['diff', '--from', snapshot, '--to', changed.url, '--format', 'json'], {
        env: { DDS_SOURCE_TOKEN: source.token, DDS_TARGET_TOKEN: changed.token },
      });
      expect(run.exitCode).toBe(1);
      expect(run.stdout).toContain('scan_scope');
      expect(run.stdout).toContain('Sales Drive');
    } finally {
      await changed.close();
    }
  });

  it('imports with an overrides file for the masked secrets; every other field arrives verbatim, source ids never', async () => {
    const target = await startEmulator({ data: { connections: [], ...targetReferences() } });
    try {
      const byName: Record<string, Record<string, string>> = {};
      const secretEnv: Record<string, string> = {};
      let i = 0;
      for (const c of recorded) {
        for (const [field, value] of Object.entries(c)) {
          if (value !== MASK) continue;
          const variable = `REAL_SECRET_${i++}`;
          secretEnv[variable] = secretValue(c.name as string, field);
          byName[c.name as string] = { ...byName[c.name as string], [field]: `\${env:${variable}}` };
        }
      }
      const overrides = join(dir, 'overrides.json');
      await writeFile(overrides, JSON.stringify({ byName }), { mode: 0o600 });
      const run = await runCli(
        ['import', snapshot, '--to', target.url, '--overrides', overrides, '--journal', join(dir, 'j.jsonl')],
        { env: { DDS_TARGET_TOKEN: target.token, ...secretEnv } },
      );
      expect(run.exitCode, run.stdout + run.stderr).toBe(0);
      expect(target.store.connections).toHaveLength(20);
      for (const c of recorded) {
        const arrived = target.store.getConnection(c.name as string) as Record<string, unknown>;
        const expected = stripServerManaged(c);
        for (const [field, value] of Object.entries(expected)) {
          if (value === MASK) expected[field] = secretValue(c.name as string, field);
        }
        // Ids of the source environment (UsersUS and Share carry a defaultScanProfileId and a
        // defaultScanId) never reach the target unmapped: dropped, with a warning.
        delete expected.defaultScanProfileId;
        delete expected.defaultScanId;
        expect(stripServerManaged(arrived), c.name as string).toEqual(expected);
      }
      for (const name of ['UsersUS', 'Share']) {
        const arrived = target.store.getConnection(name) as Record<string, unknown>;
        expect(arrived).not.toHaveProperty('defaultScanProfileId');
        expect(arrived).not.toHaveProperty('defaultScanId');
      }
      expect(run.stderr).toContain('defaultScanProfileId dropped from 2 entries (Share, UsersUS)');
      expect(run.stderr).toContain('defaultScanId dropped from 2 entries (Share, UsersUS)');
      const drive = target.store.getConnection('Sales Drive') as Record<string, unknown>;
      expect(drive.scan_scope).toBe('myDrive');
    } finally {
      await target.close();
    }
  });
});
