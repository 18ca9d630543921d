import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { EmulatorSeed, RunningEmulator } from '../../src/emulator/index.js';
import { PROFILE_SERVER_FIELDS } from '../../src/profiles/server-fields.js';
import { runCli } from '../helpers/run-cli.js';
import { useProdE2e } from './prod-e2e.js';

const e2e = useProdE2e('profiles-e2e-');

function emulator(data: EmulatorSeed): Promise<RunningEmulator> {
  return e2e.start({ data, maxPageSize: 20 });
}

/** What an import leaves behind: the same connection names with new `_id`s (minus `drop`), no profiles, no cases. */
function importedSeed(drop: readonly string[] = []): EmulatorSeed {
  const connections = (e2e.prod.connections ?? [])
    .filter((c) => !drop.includes(c.name))
    .map((c, i) => ({ ...c, _id: `9e${i.toString(16).padStart(22, '0')}` }));
  return { connections, scanTemplates: e2e.prod.scanTemplates ?? [] };
}

/** The first prod profile matching `pred`. */
function findProfile(pred: (p: Record<string, unknown>) => boolean): Record<string, unknown> {
  const p = (e2e.prod.scanProfiles ?? []).find(pred);
  if (!p) throw new Error('no such profile in prod.json');
  return p;
}

const isId = (s: string) => /^[0-9a-f]{24}$/.test(s);
const scheduledById = (p: Record<string, unknown>) =>
  p.isSingleRunScan !== true && (p.dataSourceList as string[]).every(isId);

function env(source: RunningEmulator, target?: RunningEmulator): Record<string, string> {
  return {
    DDS_SOURCE_TOKEN: source.token,
    DDS_TARGET_TOKEN: (target ?? source).token,
    DDS_TOKEN: source.token,
  };
}

function withoutServerFields(p: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(p).filter(([k]) => !PROFILE_SERVER_FIELDS.includes(k)));
}

/** `sourceList` mapped by name from the source's connections to the target's. */
function expectedTargetIds(
  source: RunningEmulator,
  target: RunningEmulator,
  sourceList: readonly string[],
): string[] {
  return sourceList.map((ref) => {
    const byId = source.store.connections.find((c) => c._id === ref);
    if (byId === undefined) return ref;
    const t = target.store.getConnection(byId.name);
    if (t === undefined) throw new Error(`target lacks ${byId.name}`);
    return t._id;
  });
}

describe('profiles get', () => {
  it('prints the profile as JSON', async () => {
    const src = await emulator(e2e.prod);
    const profile = src.store.profiles[0];
    const run = await runCli(['profiles', 'get', String(profile?._id), '--env', src.url], { env: env(src) });
    expect(run.exitCode).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(profile);
  });

  it('turns 404 and 400 into one line with the service message (exit 1)', async () => {
    const src = await emulator(e2e.prod);
    const missing = await runCli(['profiles', 'get', 'ffffffffffffffffffffffff', '--env', src.url], {
      env: env(src),
    });
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr).toMatch(
      /GET \/api\/v1\/scanProfiles\/ffffffffffffffffffffffff -> 404: .*not found/,
    );
    const malformed = await runCli(['profiles', 'get', 'nope', '--env', src.url], { env: env(src) });
    expect(malformed.exitCode).toBe(1);
    expect(malformed.stderr).toMatch(/-> 400/);
  });
});

describe('profiles clone', () => {
  it('after an import, creates the profile in the target with every data source id remapped by name', async () => {
    const src = await emulator(e2e.prod);
    const dst = await emulator(importedSeed());
    const profile = findProfile(scheduledById);
    const run = await runCli(['profiles', 'clone', String(profile._id), '--from', src.url, '--to', dst.url], {
      env: env(src, dst),
    });
    expect(run.stderr).toBe('');
    expect(run.exitCode).toBe(0);
    expect(dst.store.profiles).toHaveLength(1);
    const created = dst.store.profiles[0] as Record<string, unknown>;
    const list = profile.dataSourceList as string[];
    expect(created.dataSourceList).toEqual(expectedTargetIds(src, dst, list));
    expect((created.dataSourceList as string[]).some((id) => list.includes(id))).toBe(false);
    expect(withoutServerFields({ ...created, dataSourceList: list })).toEqual(withoutServerFields(profile));
    expect(run.stdout).toContain(String(profile._id));
    expect(run.stdout).toContain(String(created._id));
    expect(dst.store.scansStarted).toEqual([]);
  });

  it('uses an --id-map file without listing the source connections', async () => {
    const src = await emulator(e2e.prod);
    const dst = await emulator(importedSeed());
    const profile = findProfile(scheduledById);
    const idMap: Record<string, { name: string; targetId: string }> = {};
    for (const c of src.store.connections)
      idMap[c._id] = { name: c.name, targetId: String(dst.store.getConnection(c.name)?._id) };
    const file = join(e2e.dir, 'idmap.json');
    await writeFile(file, JSON.stringify(idMap));
    const run = await runCli(
      [
        'profiles',
        'clone',
        String(profile._id),
        '--from',
        src.url,
        '--to',
        dst.url,
        '--id-map',
        file,
        '--json',
      ],
      {
        env: env(src, dst),
      },
    );
    expect(run.exitCode).toBe(0);
    const result = JSON.parse(run.stdout) as {
      profiles: { sourceId: string; targetId: string; dataSources: { via: string }[] }[];
    };
    expect(result.profiles[0]?.sourceId).toBe(profile._id);
    expect(result.profiles[0]?.targetId).toBe(dst.store.profiles[0]?._id);
    expect(result.profiles[0]?.dataSources.every((d) => d.via === 'id-map')).toBe(true);
    expect(dst.store.profiles[0]?.dataSourceList).toEqual(
      (profile.dataSourceList as string[]).map((id) => idMap[id]?.targetId),
    );
    expect(src.record.requests.filter((r) => r.path === '/api/v1/ds-connections')).toEqual([]);
  });

  it('passes data sources listed by name through as names', async () => {
    const src = await emulator(e2e.prod);
    const dst = await emulator(importedSeed());
    const profile = findProfile(
      (p) => p.isSingleRunScan !== true && (p.dataSourceList as string[]).some((s) => !isId(s)),
    );
    const run = await runCli(['profiles', 'clone', String(profile._id), '--from', src.url, '--to', dst.url], {
      env: env(src, dst),
    });
    expect(run.exitCode).toBe(0);
    expect(dst.store.profiles[0]?.dataSourceList).toEqual(
      expectedTargetIds(src, dst, profile.dataSourceList as string[]),
    );
  });

  it('refuses a one-time profile without --allow-run (no scan started) and creates it with it', async () => {
    const src = await emulator(e2e.prod);
    const dst = await emulator(importedSeed());
    const oneTime = findProfile((p) => p.isSingleRunScan === true);
    const argv = ['profiles', 'clone', String(oneTime._id), '--from', src.url, '--to', dst.url];
    const refused = await runCli(argv, { env: env(src, dst) });
    expect(refused.exitCode).toBe(3);
    expect(refused.stderr).toMatch(/one-time profile.*--allow-run/);
    expect(dst.store.profiles).toEqual([]);
    expect(dst.store.scansStarted).toEqual([]);
    expect(dst.record.requests.filter((r) => r.method === 'POST')).toEqual([]);

    // With --json the refusal is also the one result on stdout, as import and undo write it.
    const refusedJson = await runCli([...argv, '--json'], { env: env(src, dst) });
    expect(refusedJson.exitCode).toBe(3);
    const refusal = JSON.parse(refusedJson.stdout) as { ok: boolean; exitCode: number; problems: unknown[] };
    expect(refusal).toMatchObject({ ok: false, exitCode: 3 });
    expect(refusal.problems.length).toBeGreaterThan(0);
    expect(JSON.stringify(refusal.problems)).toMatch(/--allow-run|one-time/);
    expect(dst.store.profiles).toEqual([]);

    const allowed = await runCli([...argv, '--allow-run'], { env: env(src, dst) });
    expect(allowed.exitCode).toBe(0);
    expect(dst.store.profiles).toHaveLength(1);
    expect(dst.store.scansStarted).toHaveLength(1);
    expect(dst.store.scansStarted[0]?.profileName).toBe(oneTime.name);
  });

  it('pre-flight: missing connections in the target -> exit 3 naming them, nothing created for any profile', async () => {
    const src = await emulator(e2e.prod);
    const profile = findProfile(scheduledById);
    const other = (e2e.prod.scanProfiles ?? []).find(
      (p) => p !== profile && p.isSingleRunScan !== true,
    ) as Record<string, unknown>;
    const names = (profile.dataSourceList as string[])
      .slice(0, 2)
      .map((id) => String(src.store.connections.find((c) => c._id === id)?.name));
    const dst = await emulator(importedSeed(names));
    const run = await runCli(
      ['profiles', 'clone', `${other._id},${profile._id}`, '--from', src.url, '--to', dst.url],
      { env: env(src, dst) },
    );
    expect(run.exitCode).toBe(3);
    // Two real names (a failed look-up would read "undefined" and match nothing meaningful).
    expect(names).toHaveLength(2);
    expect(names).not.toContain('undefined');
    for (const n of names) expect(run.stderr).toContain(n);
    expect(run.stderr).toMatch(/import/);
    // As an import's: a line per problem under a heading, then the one error line.
    const lines = run.stderr.split('\n').filter((l) => l !== '');
    expect(lines[0]).toMatch(/^Pre-flight found \d+ problems:$/);
    expect(lines.filter((l) => l.startsWith('  - ')).length).toBeGreaterThanOrEqual(2);
    expect(lines.filter((l) => l.startsWith('error: '))).toEqual([
      expect.stringMatching(/^error: Pre-flight refused the clone \(\d+ problems\); nothing was created/),
    ]);
    // A dry run with --json: the plan, its problems in it, is the one document on stdout.
    const dry = await runCli(
      [
        'profiles',
        'clone',
        `${other._id},${profile._id}`,
        '--from',
        src.url,
        '--to',
        dst.url,
        '--dry-run',
        '--json',
      ],
      { env: env(src, dst) },
    );
    expect(dry.exitCode).toBe(3);
    const plan = JSON.parse(dry.stdout) as { dryRun: boolean; problems: unknown[] };
    expect(plan.dryRun).toBe(true);
    expect(plan.problems.length).toBeGreaterThanOrEqual(2);
    expect(dry.stderr).not.toMatch(/listed above/);
    expect(dst.store.profiles).toEqual([]);
    expect(dst.record.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });

  it('--dry-run prints every mapping and sends nothing', async () => {
    const src = await emulator(e2e.prod);
    const dst = await emulator(importedSeed());
    const profile = findProfile(scheduledById);
    const run = await runCli(
      ['profiles', 'clone', String(profile._id), '--from', src.url, '--to', dst.url, '--dry-run'],
      { env: env(src, dst) },
    );
    expect(run.exitCode).toBe(0);
    for (const [from, to] of (profile.dataSourceList as string[]).map((id, i) => [
      id,
      expectedTargetIds(src, dst, profile.dataSourceList as string[])[i],
    ])) {
      expect(run.stdout).toContain(`${from} -> ${to}`);
    }
    expect(run.stderr).not.toMatch(/Pre-flight/);
    expect(dst.record.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });

  it('an unknown source profile id is a pre-flight problem (exit 3)', async () => {
    const src = await emulator(e2e.prod);
    const dst = await emulator(importedSeed());
    const run = await runCli(
      ['profiles', 'clone', 'ffffffffffffffffffffffff', '--from', src.url, '--to', dst.url],
      { env: env(src, dst) },
    );
    expect(run.exitCode).toBe(3);
    expect(run.stderr).toMatch(/ffffffffffffffffffffffff.*404/);
  });

  it('re-running reports a profile already in the target as exists: exit 0, no POST, no duplicate', async () => {
    const src = await emulator(e2e.prod);
    const dst = await emulator(importedSeed());
    const profile = findProfile(scheduledById);
    const argv = ['profiles', 'clone', String(profile._id), '--from', src.url, '--to', dst.url];
    expect((await runCli(argv, { env: env(src, dst) })).exitCode).toBe(0);
    const posts = () =>
      dst.record.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/scanProfiles').length;
    expect(posts()).toBe(1);
    const again = await runCli(argv, { env: env(src, dst) });
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`${String(profile.name)}\\s+exists`));
    expect(again.stderr).not.toMatch(/already exists|created/);
    expect(posts()).toBe(1);
    expect(dst.store.profiles).toHaveLength(1);
    // --json names it too.
    const json = await runCli(['--json', ...argv], { env: env(src, dst) });
    expect(JSON.parse(json.stdout).profiles).toEqual([
      { sourceId: profile._id, name: profile.name, result: 'exists', targetId: dst.store.profiles[0]?._id },
    ]);
    expect(posts()).toBe(1);
  });
});

describe('profiles create', () => {
  async function profileFile(name: string, body: Record<string, unknown>): Promise<string> {
    const file = join(e2e.dir, name);
    await writeFile(file, JSON.stringify(body));
    return file;
  }

  it('creates a scheduled profile whose data sources are given by name and by id, and prints its _id', async () => {
    const emu = await emulator(importedSeed());
    const [a, b] = emu.store.connections;
    const file = await profileFile('ok.json', {
      name: 'Weekly HR',
      dataSourceList: [String(a?.name), String(b?._id)],
      scanTemplateId: '64b7f0c2a1d3e4f5a6b7c801',
      schedule: { cronExpression: '0 3 * * 1', timeZone: 'Europe/Berlin' },
      owners: ['dpo@example.com'],
      _id: '000000000000000000000000',
    });
    const run = await runCli(['profiles', 'create', '--env', emu.url, '--file', file], {
      env: { DDS_TOKEN: emu.token },
    });
    expect(run.exitCode).toBe(0);
    const created = emu.store.profiles[0];
    expect(run.stdout.trim()).toBe(created?._id);
    expect(created).toMatchObject({
      name: 'Weekly HR',
      owners: ['dpo@example.com'],
      dataSourceList: [a?.name, b?._id],
    });
    expect(created?._id).not.toBe('000000000000000000000000');
  });

  it('refuses a bad file with exit 2 naming the JSON pointer, before sending anything', async () => {
    const emu = await emulator(importedSeed());
    const file = await profileFile('bad.json', {
      name: 'x',
      dataSourceList: ['a'],
      scanTemplateId: 't',
      schedule: { cronExpression: '0 3 * *', timeZone: 'Mars/Base' },
    });
    const run = await runCli(['profiles', 'create', '--env', emu.url, '--file', file], {
      env: { DDS_TOKEN: emu.token },
    });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('/schedule/cronExpression');
    expect(run.stderr).toContain('/schedule/timeZone');
    expect(emu.record.requests).toEqual([]);
  });

  it('refuses unknown data sources with exit 3 listing them', async () => {
    const emu = await emulator(importedSeed());
    const file = await profileFile('missing.json', {
      name: 'x',
      dataSourceList: ['ghost-db', String(emu.store.connections[0]?.name), 'abcdefabcdefabcdefabcdef'],
      scanTemplateId: '64b7f0c2a1d3e4f5a6b7c801',
      schedule: { cronExpression: '0 3 * * *', timeZone: 'UTC' },
    });
    const run = await runCli(['profiles', 'create', '--env', emu.url, '--file', file], {
      env: { DDS_TOKEN: emu.token },
    });
    expect(run.exitCode).toBe(3);
    expect(run.stderr).toMatch(/ghost-db, abcdefabcdefabcdefabcdef/);
    expect(emu.record.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });

  it('a one-time profile needs --allow-run: refused with nothing sent, then created and its scan started', async () => {
    const emu = await emulator(importedSeed());
    const file = await profileFile('once.json', {
      name: 'Once',
      dataSourceList: [String(emu.store.connections[0]?.name)],
      scanTemplateId: '64b7f0c2a1d3e4f5a6b7c801',
      isSingleRunScan: true,
    });
    const argv = ['profiles', 'create', '--env', emu.url, '--file', file];
    const refused = await runCli(argv, { env: { DDS_TOKEN: emu.token } });
    expect(refused.exitCode).toBe(3);
    expect(refused.stderr).toMatch(/--allow-run/);
    expect(emu.record.requests).toEqual([]);
    expect(emu.store.scansStarted).toEqual([]);
    const refusedJson = await runCli([...argv, '--json'], { env: { DDS_TOKEN: emu.token } });
    expect(refusedJson.exitCode).toBe(3);
    expect(JSON.parse(refusedJson.stdout)).toMatchObject({ ok: false, exitCode: 3 });
    expect(emu.record.requests).toEqual([]);
    const allowed = await runCli([...argv, '--allow-run', '--json'], { env: { DDS_TOKEN: emu.token } });
    expect(allowed.exitCode).toBe(0);
    expect(JSON.parse(allowed.stdout)._id).toBe(emu.store.profiles[0]?._id);
    expect(emu.store.scansStarted).toHaveLength(1);
  });

  it('a protected environment needs --confirm NAME', async () => {
    const emu = await emulator(importedSeed());
    const config = join(e2e.dir, 'protected.config.json');
    await writeFile(
      config,
      JSON.stringify({ environments: { dr: { url: emu.url, tokenEnv: 'DR_TOKEN', protected: true } } }),
    );
    const file = await profileFile('p.json', {
      name: 'P',
      dataSourceList: [String(emu.store.connections[0]?.name)],
      scanTemplateId: '64b7f0c2a1d3e4f5a6b7c801',
      schedule: { cronExpression: '0 3 * * *', timeZone: 'UTC' },
    });
    const argv = ['profiles', 'create', '--config', config, '--env', 'dr', '--file', file];
    const refused = await runCli(argv, { env: { DR_TOKEN: emu.token } });
    expect(refused.exitCode).toBe(3);
    expect(refused.stderr).toMatch(/--confirm dr/);
    expect(emu.record.requests).toEqual([]);
    const wrong = await runCli([...argv, '--confirm', 'prod'], { env: { DR_TOKEN: emu.token } });
    expect(wrong.exitCode).toBe(3);
    const ok = await runCli([...argv, '--confirm', 'dr'], { env: { DR_TOKEN: emu.token } });
    expect(ok.exitCode).toBe(0);
    expect(emu.store.profiles).toHaveLength(1);

    // A clone's dry run into it sends nothing and says what the real run needs.
    const src = await emulator(e2e.prod);
    const profile = findProfile(scheduledById);
    const dry = await runCli(
      [
        'profiles',
        'clone',
        String(profile._id),
        '--from',
        src.url,
        '--config',
        config,
        '--to',
        'dr',
        '--dry-run',
      ],
      { env: { ...env(src), DR_TOKEN: emu.token } },
    );
    expect(dry.exitCode, dry.stderr).toBe(0);
    expect(dry.stderr).toMatch(/dr is a protected environment: the real run needs --confirm dr/);
    expect(emu.store.profiles).toHaveLength(1);
  });
});
