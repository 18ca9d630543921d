import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateConnections } from '../../src/emulator/generate.js';
import { startEmulator } from '../../src/emulator/index.js';
import type { RunningEmulator } from '../../src/emulator/types.js';
import { EXPORT_ID_BATCH } from '../../src/export/export-snapshot.js';
import type { Connection } from '../../src/model/connection.js';
import { hashEntryLines } from '../../src/snapshot/checksum.js';
import { canonicalizeEntry } from '../../src/snapshot/format.js';
import { TOOL_VERSION } from '../../src/version.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let emu: RunningEmulator;
let dir: string;
let env: Record<string, string>;
let snapshotPath: string;
let serviceExport: Connection[];

const seedConnections = generateConnections(300, { seed: 7 });

function byName(a: { name: string }, b: { name: string }): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

async function fetchExport(query = ''): Promise<Connection[]> {
  const res = await fetch(`${emu.url}/api/v1/ds-connections/file-download/export${query}`, {
    headers: { Authorization: `Bearer ${emu.token}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Connection[];
}

function lines(text: string): string[] {
  return text.split('\n');
}

beforeAll(async () => {
  emu = await startEmulator({ port: 0, data: { connections: seedConnections } });
  dir = await makeTempDir('dds-e2e-export-');
  env = { DDS_TOKEN: emu.token, DDS_SOURCE_TOKEN: emu.token };
  snapshotPath = join(dir, 'all.snapshot.jsonl');
  const run = await runCli(['export', '--from', emu.url, '-o', snapshotPath], { env, cwd: dir });
  expect(run.stderr).not.toMatch(/error/);
  expect(run.exitCode).toBe(0);
  expect(run.stdout.trim()).toBe(snapshotPath);
  serviceExport = await fetchExport();
});

afterAll(async () => {
  await emu?.close();
});

describe('export', () => {
  it('writes a 0600 snapshot per the contract whose entries equal the service export', async () => {
    expect((await stat(snapshotPath)).mode & 0o777).toBe(0o600);
    const text = await readFile(snapshotPath, 'utf8');
    const all = lines(text);
    expect(all.at(-1)).toBe('');
    const header = JSON.parse(all[0] as string);
    expect(header).toMatchObject({
      kind: 'dds-migrate/snapshot',
      formatVersion: 2,
      tool: `dds-migrate ${TOOL_VERSION}`,
      source: { url: emu.url, environment: new URL(emu.url).host },
      selection: { ids: null, types: null, name: null },
      include: ['connections', 'scanProfiles'],
    });
    expect(new Date(header.createdAt).toISOString()).toBe(header.createdAt);
    const entryLines = all.slice(1, -2);
    expect(entryLines).toHaveLength(300);
    // The emulator of this file has no scan profiles: the trailer says so.
    expect(JSON.parse(all.at(-2) as string)).toEqual({
      kind: 'dds-migrate/snapshot-end',
      entryCount: 300,
      connectionCount: 300,
      scanProfileCount: 0,
      sha256: hashEntryLines(entryLines),
    });
    const entries = entryLines.map((l) => JSON.parse(l) as Connection);
    expect(entries).toEqual([...serviceExport].sort(byName));
    // Keys in the stable order, values verbatim (the service's mixed types survive).
    expect(entryLines).toEqual(entries.map((e) => JSON.stringify(canonicalizeEntry(e))));
    expect(entries.some((e) => e.enabled === 'yes') && entries.some((e) => e.enabled === true)).toBe(true);
  });

  it('reports the types and the masked secrets in --json', async () => {
    const out = join(dir, 'json.snapshot.jsonl');
    const run = await runCli(['export', '--from', emu.url, '-o', out, '--json'], { env });
    expect(run.exitCode).toBe(0);
    const result = JSON.parse(run.stdout);
    const expectedTypes: Record<string, number> = {};
    for (const c of serviceExport) expectedTypes[c.type] = (expectedTypes[c.type] ?? 0) + 1;
    expect(result.types).toEqual(expectedTypes);
    expect(result.entryCount).toBe(300);
    expect(result.path).toBe(out);
    const masked = serviceExport.filter((c) => Object.values(c).includes('******')).length;
    expect(masked).toBeGreaterThan(0);
    expect(result.maskedSecrets.entries).toBeGreaterThanOrEqual(masked);
    expect(result.maskedSecrets.fields.password).toBeGreaterThan(0);
  });

  it('--type selects through the list and the export', async () => {
    const out = join(dir, 'typed.snapshot.jsonl');
    const run = await runCli(['export', '--from', emu.url, '--type', 's3,smb', '-o', out], { env });
    expect(run.exitCode).toBe(0);
    const entries = lines(await readFile(out, 'utf8'))
      .slice(1, -2)
      .map((l) => JSON.parse(l) as Connection);
    const expected = serviceExport.filter((c) => c.type === 's3' || c.type === 'smb').sort(byName);
    expect(expected.length).toBeGreaterThan(0);
    expect(entries).toEqual(expected);
    expect(JSON.parse(lines(await readFile(out, 'utf8'))[0] as string).selection).toEqual({
      ids: null,
      types: ['s3', 'smb'],
      name: null,
    });
  });

  it('--name selects by glob, combined with --type', async () => {
    const out = join(dir, 'named.snapshot.jsonl');
    const run = await runCli(
      ['export', '--from', emu.url, '--name', '*-finance-*', '--type', 'rdb-mysql', '-o', out],
      { env },
    );
    expect(run.exitCode).toBe(0);
    const names = lines(await readFile(out, 'utf8'))
      .slice(1, -2)
      .map((l) => (JSON.parse(l) as Connection).name);
    const expected = serviceExport
      .filter((c) => c.type === 'rdb-mysql' && c.name.includes('-finance-'))
      .map((c) => c.name)
      .sort();
    expect(expected.length).toBeGreaterThan(0);
    expect(names).toEqual(expected);
  });

  it('--ids exports just those', async () => {
    const ids = serviceExport.slice(0, 3).map((c) => c._id as string);
    const out = join(dir, 'ids.snapshot.jsonl');
    const run = await runCli(['export', '--from', emu.url, '--ids', ids.join(','), '-o', out], { env });
    expect(run.exitCode).toBe(0);
    const got = lines(await readFile(out, 'utf8'))
      .slice(1, -2)
      .map((l) => (JSON.parse(l) as Connection)._id);
    expect([...got].sort()).toEqual([...ids].sort());
  });

  it('exports a large selection in batches of ids, each asked once', async () => {
    emu.record.reset();
    const out = join(dir, 'glob-all.snapshot.jsonl');
    const run = await runCli(['export', '--from', emu.url, '--name', 'gen-*', '-o', out], { env });
    expect(run.exitCode).toBe(0);
    const exports = emu.record.requests.filter((r) => r.path.endsWith('/file-download/export'));
    expect(exports).toHaveLength(Math.ceil(300 / EXPORT_ID_BATCH));
    const asked = exports.flatMap((r) => (new URLSearchParams(r.query).get('ids') ?? '').split(','));
    expect(new Set(asked).size).toBe(300);
    const entries = lines(await readFile(out, 'utf8'))
      .slice(1, -2)
      .map((l) => JSON.parse(l) as Connection);
    expect(entries).toEqual([...serviceExport].sort(byName));
  });

  it('a selection that matches nothing writes an empty snapshot with a warning', async () => {
    const out = join(dir, 'none.snapshot.jsonl');
    const run = await runCli(['export', '--from', emu.url, '--name', 'no-such-*', '-o', out], { env });
    expect(run.exitCode).toBe(0);
    expect(run.stderr).toMatch(/warning: the selection matched no connection/);
    expect(lines(await readFile(out, 'utf8'))).toHaveLength(3);
  });

  it('--out-dir writes DIR/<environment>/<timestamp>.snapshot.jsonl and never overwrites', async () => {
    const outDir = join(dir, 'backups');
    const first = await runCli(['export', '--from', emu.url, '--type', 's3', '--out-dir', outDir], { env });
    const second = await runCli(['export', '--from', emu.url, '--type', 'smb', '--out-dir', outDir], { env });
    expect(first.exitCode).toBe(0);
    expect(second.exitCode).toBe(0);
    const envDir = join(outDir, new URL(emu.url).host.replace(':', '_'));
    const files = (await readdir(envDir)).sort();
    expect(files).toHaveLength(2);
    for (const f of files)
      expect(f).toMatch(/^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z(-\d+)?\.snapshot\.jsonl$/);
    expect(first.stdout.trim()).not.toBe(second.stdout.trim());
    const firstText = await readFile(first.stdout.trim(), 'utf8');
    expect(firstText).toContain('"type":"s3"');
    expect(firstText).not.toContain('"type":"smb"');
  });

  it('refuses both -o and --out-dir, or neither (exit 2, nothing sent)', async () => {
    emu.record.reset();
    const both = await runCli(['export', '--from', emu.url, '-o', join(dir, 'x'), '--out-dir', dir], { env });
    expect(both.exitCode).toBe(2);
    const neither = await runCli(['export', '--from', emu.url], { env });
    expect(neither.exitCode).toBe(2);
    expect(neither.stderr).toMatch(/exactly one of -o FILE or --out-dir DIR/);
    const missingDir = await runCli(['export', '--from', emu.url, '-o', join(dir, 'no', 'x.jsonl')], { env });
    expect(missingDir.exitCode).toBe(2);
    expect(emu.record.requests).toHaveLength(0);
  });
});

describe('validate', () => {
  it('exits 0 on a fresh export, warning about masked secrets', async () => {
    const run = await runCli(['validate', snapshotPath], { env });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(/300 entries checked: all valid/);
    expect(run.stderr).toMatch(/must be supplied at import/);
  });

  it('exits 0 against the environment own templates too', async () => {
    const run = await runCli(['validate', snapshotPath, '--templates-from', emu.url, '--json'], { env });
    expect(run.exitCode).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.valid).toBe(true);
    expect(report.entryCount).toBe(300);
  });

  it('exits 3 on an entry missing a mandatory field, naming entry, type and pointer', async () => {
    const text = await readFile(snapshotPath, 'utf8');
    const all = lines(text);
    const entryLines = all.slice(1, -2);
    const i = entryLines.findIndex((l) => l.includes('"type":"s3"'));
    const entry = JSON.parse(entryLines[i] as string);
    delete entry.bucket_name;
    entryLines[i] = JSON.stringify(entry);
    const trailer = {
      kind: 'dds-migrate/snapshot-end',
      entryCount: 300,
      connectionCount: 300,
      scanProfileCount: 0,
      sha256: hashEntryLines(entryLines),
    };
    const bad = join(dir, 'missing.snapshot.jsonl');
    await writeFile(bad, `${[all[0], ...entryLines, JSON.stringify(trailer)].join('\n')}\n`);
    const run = await runCli(['validate', bad], { env });
    expect(run.exitCode).toBe(3);
    expect(run.stdout).toContain(`${entry.name} (s3) /bucket_name: is required`);
    const json = await runCli(['validate', bad, '--json'], { env });
    expect(json.exitCode).toBe(3);
    expect(JSON.parse(json.stdout).errors).toEqual([
      { kind: 'schema', entry: entry.name, type: 's3', path: '/bucket_name', message: 'is required' },
    ]);
  });

  describe('refuses a malformed snapshot with exit 2, naming the line', () => {
    async function damaged(
      name: string,
      edit: (all: string[]) => string,
    ): Promise<{ stderr: string; exitCode: number }> {
      const all = lines(await readFile(snapshotPath, 'utf8'));
      const path = join(dir, `${name}.snapshot.jsonl`);
      await writeFile(path, edit(all));
      const run = await runCli(['validate', path], { env });
      expect(run.stdout).toBe('');
      return run;
    }

    it('truncated', async () => {
      const run = await damaged('truncated', (all) => `${all.slice(0, 150).join('\n')}\n`);
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toMatch(/truncated\.snapshot\.jsonl:151: .*truncated/);
    });

    it('wrong sha256', async () => {
      const run = await damaged('sha', (all) => {
        const t = JSON.parse(all[301] as string);
        t.sha256 = 'f'.repeat(64);
        all[301] = JSON.stringify(t);
        return all.join('\n');
      });
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toMatch(/sha\.snapshot\.jsonl:302: sha256/);
    });

    it('wrong count', async () => {
      const run = await damaged('count', (all) => {
        const t = JSON.parse(all[301] as string);
        t.entryCount = 299;
        all[301] = JSON.stringify(t);
        return all.join('\n');
      });
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toMatch(/count\.snapshot\.jsonl:302: trailer says 299 entries/);
    });

    it('bad line', async () => {
      const run = await damaged('badline', (all) => {
        all[57] = (all[57] as string).slice(0, 40);
        return all.join('\n');
      });
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toMatch(
        /badline\.snapshot\.jsonl:58: not valid JSON \(.*\)\. The snapshot is damaged: export it again/,
      );
    });

    it('formatVersion 99', async () => {
      const run = await damaged('v99', (all) => {
        all[0] = (all[0] as string).replace('"formatVersion":2', '"formatVersion":99');
        return all.join('\n');
      });
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toMatch(/v99\.snapshot\.jsonl:1: formatVersion 99 is newer/);
    });

    it('wrong kind', async () => {
      const run = await damaged('kind', (all) => {
        all[0] = (all[0] as string).replace('"dds-migrate/snapshot"', '"dds-migrate/other"');
        return all.join('\n');
      });
      expect(run.exitCode).toBe(2);
      expect(run.stderr).toMatch(/kind\.snapshot\.jsonl:1: not a dds-migrate snapshot/);
    });
  });
});
