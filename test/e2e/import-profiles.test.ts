/**
 * The whole environment in a snapshot: `export` writes the scan profiles beside the
 * connections (format 2), `import` restores them after the connections with `dataSourceList` remapped
 * to the target's ids by name, one-time profiles only with `--allow-run`; a re-run sends nothing; `diff`
 * between the snapshot and the restored environment finds nothing; a version 1 snapshot imports as
 * before. The CLI in-process against emulators on 127.0.0.1.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type EmulatorSeed, type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { loadSnapshot } from '../../src/snapshot/read.js';
import { runCli } from '../helpers/run-cli.js';
import { type ImportSource, prepareImportSource, targetReferences } from './import.helpers.js';

const PROD = join(import.meta.dirname, '..', '..', 'fixtures', 'environments', 'prod.json');
const started: RunningEmulator[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((e) => e.close()));
});

async function setUp(
  prefix: string,
  sourceData?: EmulatorSeed,
): Promise<{ src: ImportSource; target: RunningEmulator; snapshot: string }> {
  const src = await prepareImportSource(prefix, {}, sourceData);
  started.push(src.source);
  const target = await startEmulator({ data: { connections: [], ...targetReferences() } });
  started.push(target);
  const snapshot = join(src.dir, 'v2.snapshot.jsonl');
  const exported = await runCli(['export', '--from', src.source.url, '-o', snapshot], {
    env: { DDS_SOURCE_TOKEN: src.source.token },
  });
  // Every profile of the source (4 in prod.json), so none is lost on the way.
  expect(exported.stderr).toMatch(`Wrote ${src.source.store.profiles.length} scan profiles`);
  expect(exported.exitCode).toBe(0);
  return { src, target, snapshot };
}

function importArgs(
  src: ImportSource,
  target: RunningEmulator,
  snapshot: string,
  extra: string[] = [],
): string[] {
  return [
    'import',
    snapshot,
    '--to',
    target.url,
    '--overrides',
    src.overridesPath,
    '--no-progress',
    ...extra,
  ];
}

function env(src: ImportSource, target: RunningEmulator): Record<string, string> {
  return { ...src.secretEnv, DDS_TARGET_TOKEN: target.token, DDS_SOURCE_TOKEN: src.source.token };
}

function profilePosts(emu: RunningEmulator): number {
  return emu.record.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/scanProfiles').length;
}

function findProfile(emu: RunningEmulator, name: string): Record<string, unknown> | undefined {
  return emu.store.profiles.find((p) => p.name === name);
}

/** Each source profile's data sources as the target's ids of the same names, in order. */
function expectRemapped(source: RunningEmulator, target: RunningEmulator, name: string): void {
  const s = findProfile(source, name);
  const t = findProfile(target, name);
  expect(s, name).toBeDefined();
  expect(t, name).toBeDefined();
  const expected = ((s?.dataSourceList ?? []) as string[]).map((ref) => {
    const byId = source.store.connections.find((c) => c._id === ref);
    // A source that listed the data source by name gets the name again.
    if (byId === undefined) return ref;
    return target.store.getConnection(byId.name)?._id;
  });
  expect(t?.dataSourceList).toEqual(expected);
  expect(t?.schedule).toEqual(s?.schedule);
  expect(t?.scanTemplateId).toBe(s?.scanTemplateId);
}

describe('import restores scan profiles (snapshot format 2)', () => {
  it('creates every connection and every scheduled profile once, remapped, no scan started; a re-run sends nothing', async () => {
    const { src, target, snapshot } = await setUp('import-profiles-');
    const loaded = await loadSnapshot(snapshot);
    expect(loaded.header.formatVersion).toBe(2);
    expect(loaded.profiles.map((p) => p.scanProfile.name)).toEqual([
      'Monthly Full - Shares',
      'Nightly PII - Finance',
      'One-time PCI sweep - S3',
      'Weekly Metadata - Databases',
    ]);
    const report = join(src.dir, 'report.jsonl');
    const run = await runCli(importArgs(src, target, snapshot, ['--report', report]), {
      env: env(src, target),
    });
    expect(run.stderr).not.toMatch(/bug/);
    expect(run.exitCode).toBe(0);
    expect(target.store.connections).toHaveLength(src.entries.length);
    for (const e of src.entries) expect(target.record.createCount(e.name, 'connection')).toBe(1);
    const scheduled = ['Monthly Full - Shares', 'Nightly PII - Finance', 'Weekly Metadata - Databases'];
    for (const name of scheduled) {
      expect(target.record.createCount(name, 'scanProfile'), name).toBe(1);
      expectRemapped(src.source, target, name);
    }
    expect(findProfile(target, 'One-time PCI sweep - S3')).toBeUndefined();
    expect(target.store.scansStarted).toHaveLength(0);
    expect(run.stdout).toMatch(/One-time PCI sweep - S3: skipped: one-time profile/);

    const lines = (await readFile(report, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const profileLines = lines.filter((l) => l.object === 'scan profile');
    expect(profileLines.map((l) => [l.name, l.outcome])).toEqual([
      ['Monthly Full - Shares', 'created'],
      ['Nightly PII - Finance', 'created'],
      ['One-time PCI sweep - S3', 'skipped'],
      ['Weekly Metadata - Databases', 'created'],
    ]);
    expect(lines.filter((l) => l.object === 'connection')).toHaveLength(src.entries.length);

    // Re-run: nothing sent.
    const before = target.record.requests.filter((r) => r.method !== 'GET').length;
    const again = await runCli(importArgs(src, target, snapshot), { env: env(src, target) });
    expect(again.exitCode).toBe(0);
    expect(target.record.requests.filter((r) => r.method !== 'GET').length).toBe(before);

    // profiles list shows them.
    const listed = await runCli(['profiles', 'list', '--env', target.url, '--format', 'json'], {
      env: { DDS_TOKEN: target.token },
    });
    expect(listed.exitCode).toBe(0);
    expect((JSON.parse(listed.stdout) as { name: string }[]).map((p) => p.name).sort()).toEqual(scheduled);

    // diff between the snapshot and the restored environment, profiles included: the one-time profile
    // is the only difference (it was skipped), and it is a scan profile, not a connection.
    const diff = await runCli(['diff', '--from', snapshot, '--to', target.url, '--format', 'json'], {
      env: { DDS_TARGET_TOKEN: target.token },
    });
    const result = JSON.parse(diff.stdout);
    expect(result.added).toEqual([]);
    expect(result.removed).toEqual([]);
    expect(result.scanProfiles).toEqual({ added: ['One-time PCI sweep - S3'], removed: [], changed: [] });

    // --allow-run creates the one-time one (and starts its scan), nothing else.
    const allow = await runCli(importArgs(src, target, snapshot, ['--allow-run']), { env: env(src, target) });
    expect(allow.exitCode).toBe(0);
    expect(target.record.createCount('One-time PCI sweep - S3', 'scanProfile')).toBe(1);
    expectRemapped(src.source, target, 'One-time PCI sweep - S3');
    expect(target.store.scansStarted).toHaveLength(1);
    expect(profilePosts(target)).toBe(4);

    const clean = await runCli(['diff', '--from', snapshot, '--to', target.url, '--format', 'json'], {
      env: { DDS_TARGET_TOKEN: target.token },
    });
    expect(JSON.parse(clean.stdout).scanProfiles).toEqual({ added: [], removed: [], changed: [] });
    expect(clean.exitCode).toBe(0);
  }, 60_000);

  it('refuses in pre-flight a profile naming a connection neither in the target nor imported (exit 3, nothing sent)', async () => {
    const { src, target, snapshot } = await setUp('import-profiles-missing-');
    const run = await runCli(
      importArgs(src, target, snapshot, ['--only', 'finance-sf,Nightly PII - Finance']),
      {
        env: env(src, target),
      },
    );
    expect(run.exitCode).toBe(3);
    expect(run.stderr).toMatch(
      /Nightly PII - Finance \/dataSourceList\/0: connection 'finance-invoices-s3' is neither in the target nor created by this import/,
    );
    expect(target.record.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  }, 60_000);

  it('--json is not ok when only scan profiles failed (exit 1)', async () => {
    // A profile on a scan template the target lacks: the target refuses its POST (400).
    const prod = JSON.parse(await readFile(PROD, 'utf8')) as EmulatorSeed;
    const template = { _id: 'a1b2c3d4e5f6a1b2c3d4e5f0', name: 'Source only' };
    const profile = { ...prod.scanProfiles?.[0], name: 'On a template the target lacks' };
    const { src, target, snapshot } = await setUp('import-profiles-json-', {
      ...prod,
      scanTemplates: [...(prod.scanTemplates ?? []), template],
      scanProfiles: [
        ...(prod.scanProfiles ?? []),
        { ...profile, _id: undefined, scanTemplateId: template._id },
      ],
    });
    const run = await runCli(importArgs(src, target, snapshot, ['--json']), { env: env(src, target) });
    expect(run.exitCode).toBe(1);
    const out = JSON.parse(run.stdout);
    expect(out.counts.failed).toBe(0);
    expect(out.scanProfiles.failures).toEqual([
      expect.objectContaining({ name: 'On a template the target lacks', httpStatus: 400 }),
    ]);
    expect(out.ok).toBe(false);
  }, 60_000);

  it('imports a version 1 snapshot as before: connections only, no profile touched', async () => {
    const { src, target } = await setUp('import-profiles-v1-');
    const text = await readFile(src.snapshot, 'utf8');
    // The helper writes today's header; make it a genuine version 1 file (header is not checksummed).
    const lines = text.split('\n');
    const header = JSON.parse(lines[0] as string);
    delete header.include;
    header.formatVersion = 1;
    lines[0] = JSON.stringify(header);
    const v1 = join(src.dir, 'v1.snapshot.jsonl');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(v1, lines.join('\n'), { mode: 0o600 });
    const run = await runCli(importArgs(src, target, v1), { env: env(src, target) });
    expect(run.exitCode).toBe(0);
    expect(target.store.connections).toHaveLength(src.entries.length);
    expect(profilePosts(target)).toBe(0);
    expect(run.stdout).not.toMatch(/Scan profiles/);
  }, 60_000);
});
