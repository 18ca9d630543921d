// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:NAME}" is a literal overrides placeholder, not a template
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isServerManagedField } from '../../src/connections/server-managed.js';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import type { Connection } from '../../src/model/connection.js';
import { clearRegisteredSecrets } from '../../src/secrets.js';
import { runCli } from '../helpers/run-cli.js';
import {
  countCreatePosts,
  prepareImportSource,
  targetReferences,
  writeSnapshotFromEmulator,
} from './import.helpers.js';

function comparable(c: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(c).filter(([k]) => !isServerManagedField(k)));
}

describe('import (end to end, against the emulator)', () => {
  let source: RunningEmulator;
  let dir: string;
  let snapshot: string;
  let entries: Connection[];
  let overridesPath: string;
  let secretEnv: Record<string, string>;

  beforeAll(async () => {
    ({ source, dir, snapshot, entries, overridesPath, secretEnv } = await prepareImportSource('import-e2e-', {
      all: { scanner_group: 'dr-scanners' },
    }));
  });
  afterAll(async () => {
    await source.close();
  });

  let target: RunningEmulator;
  let work: string;
  beforeEach(async () => {
    target = await startEmulator({ data: { connections: [], ...targetReferences() } });
    work = await mkdtemp(join(dir, 'run-'));
  });
  afterEach(async () => {
    await target.close();
    clearRegisteredSecrets();
  });

  const importArgs = (...extra: string[]) => [
    'import',
    snapshot,
    '--to',
    target.url,
    ...(extra.includes('--journal') ? [] : ['--journal', join(work, 'journal.jsonl')]),
    ...extra,
  ];
  const env = () => ({ DDS_TARGET_TOKEN: target.token, ...secretEnv });

  it('creates every connection once with overrides, writes id map and report, and a re-run sends 0 POSTs', async () => {
    const idMap = join(work, 'ids.json');
    const report = join(work, 'report.jsonl');
    const run = await runCli(
      importArgs('--overrides', overridesPath, '--id-map', idMap, '--report', report),
      { env: env() },
    );
    expect(run.stderr).not.toMatch(/error/);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(new RegExp(`created\\s+${entries.length}`));
    for (const e of entries) expect(target.record.createCount(e.name)).toBe(1);
    expect(target.store.connections).toHaveLength(entries.length);

    // Fields equal, except the overridden ones (secrets restored, scanner_group set for the DR site).
    for (const e of entries) {
      const src = source.store.getConnection(e.name) as Record<string, unknown>;
      const dst = target.store.getConnection(e.name) as Record<string, unknown>;
      expect(comparable(dst)).toEqual({ ...comparable(src), scanner_group: 'dr-scanners' });
    }

    const ids = JSON.parse(await readFile(idMap, 'utf8')) as Record<
      string,
      { name: string; targetId: string }
    >;
    expect(Object.keys(ids)).toHaveLength(entries.length);
    for (const e of entries)
      expect(ids[e._id as string]).toEqual({
        name: e.name,
        targetId: target.store.getConnection(e.name)?._id,
      });
    const lines = (await readFile(report, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { outcome: string });
    expect(lines).toHaveLength(entries.length);
    expect(new Set(lines.map((l) => l.outcome))).toEqual(new Set(['created']));
    expect((await stat(join(work, 'journal.jsonl'))).mode & 0o777).toBe(0o600);
    expect((await stat(report)).mode & 0o777).toBe(0o600);

    // Journal, report and id map hold no secret value.
    const written = [
      await readFile(join(work, 'journal.jsonl'), 'utf8'),
      await readFile(report, 'utf8'),
      await readFile(idMap, 'utf8'),
      run.stdout,
      run.stderr,
    ].join('\n');
    for (const secret of Object.values(secretEnv).filter((s) => s.length >= 4))
      expect(written).not.toContain(secret);

    target.record.reset();
    const again = await runCli(
      importArgs('--overrides', overridesPath, '--id-map', idMap, '--report', report, '--json'),
      { env: env() },
    );
    expect(again.exitCode).toBe(0);
    expect(countCreatePosts(target)).toBe(0);
    // A finished run is not replayed: the re-run plans afresh against the target, finds every
    // connection there, writes nothing and records no run.
    const result = JSON.parse(again.stdout) as {
      counts: { created: number; exists: number };
      upToDate: boolean | null;
      run: number | null;
    };
    expect(result.counts).toMatchObject({ created: 0, exists: entries.length });
    // Under --on-conflict skip what the target holds is not compared: not known to be up to date.
    expect(result).toMatchObject({ upToDate: null, run: null });
    const compared = await runCli(
      importArgs('--overrides', overridesPath, '--on-conflict', 'update', '--json'),
      { env: env() },
    );
    expect(compared.exitCode, compared.stderr).toBe(0);
    expect(JSON.parse(compared.stdout)).toMatchObject({ upToDate: true, run: null });
    const idsAgain = JSON.parse(await readFile(idMap, 'utf8')) as Record<string, unknown>;
    expect(idsAgain).toEqual(ids);
  });

  it('refuses a masked secret without an override: exit 3, zero POSTs, every problem listed', async () => {
    const run = await runCli(importArgs(), { env: env() });
    expect(run.exitCode).toBe(3);
    expect(countCreatePosts(target)).toBe(0);
    expect(run.stderr).toMatch(/masked/);
    const masked = entries.filter((e) => Object.values(e).includes('******'));
    expect(masked.length).toBeGreaterThan(0);
    for (const e of masked) expect(run.stderr).toContain(e.name);
    // A refused first run leaves no journal behind.
    await expect(stat(join(work, 'journal.jsonl'))).rejects.toThrow();
  });

  it('stops on a wrong token: exit 4, and the token is in no output', async () => {
    const token = 'wrong-token-0123456789';
    const run = await runCli(
      importArgs('--overrides', overridesPath, '--log-file', join(work, 'log.jsonl')),
      {
        env: { ...env(), DDS_TARGET_TOKEN: token },
      },
    );
    expect(run.exitCode).toBe(4);
    expect(run.stdout + run.stderr).not.toContain(token);
    // The log must exist (a missing one would contain nothing and prove nothing).
    const log = await readFile(join(work, 'log.jsonl'), 'utf8');
    expect(log).toMatch(/401/);
    expect(log).not.toContain(token);
    expect(target.store.connections).toHaveLength(0);
  });

  it('checks options once at the boundary (exit 2, nothing sent)', async () => {
    const zero = await runCli(importArgs('--concurrency', '0'), { env: env() });
    expect(zero.exitCode).toBe(2);
    expect(zero.stderr).toContain('Expected --concurrency to be an integer from 1 to 64, got 0');
    const rate = await runCli(importArgs('--rate', 'fast'), { env: env() });
    expect(rate.exitCode).toBe(2);
    expect(rate.stderr).toContain('Expected --rate to be a number of requests per second >= 0.001, got fast');
    const only = await runCli(importArgs('--only', 'no-such-connection'), { env: env() });
    expect(only.exitCode).toBe(2);
    expect(only.stderr).toContain('no-such-connection');
    expect(target.record.requests).toHaveLength(0);
  });

  it('warns when an override would remove part of an entry; custom_fields are merged by field_name', async () => {
    const withCustom = entries.find(
      (e) => Array.isArray(e.custom_fields) && (e.custom_fields as unknown[]).length > 1,
    );
    expect(withCustom).toBeDefined();
    const name = withCustom?.name as string;
    const fields = withCustom?.custom_fields as { field_name: string }[];
    const overrides = JSON.parse(await readFile(overridesPath, 'utf8')) as {
      byName: Record<string, Record<string, unknown>>;
    };
    // Only the first custom field given: merged by field_name, the others are kept (no warning for them).
    const merged = join(work, 'merged.json');
    const own = overrides.byName[name] ?? {};
    const ownCustom = (
      (own.custom_fields as { field_name: string; field_type?: string }[] | undefined) ?? []
    ).filter((f) => f.field_type === 'encrypted');
    await writeFile(
      merged,
      JSON.stringify({
        ...overrides,
        byName: {
          ...overrides.byName,
          [name]: { ...own, custom_fields: ownCustom, owners_v2: null },
        },
      }),
    );
    const run = await runCli(importArgs('--overrides', merged, '--dry-run'), { env: env() });
    expect(run.exitCode).toBe(0);
    const warned = run.stderr.split('\n').filter((l) => l.includes('overrides remove'));
    expect(withCustom?.owners_v2).not.toBeNull();
    expect(warned).toEqual([`warning: overrides remove /owners_v2 of ${name}`]);
    expect(fields.length).toBeGreaterThan(ownCustom.length);
  });

  it('--dry-run prints the plan and sends nothing but reads', async () => {
    await target.close();
    target = await startEmulator({
      data: {
        connections: [source.store.getConnection(entries[0]?.name as string) as never],
        ...targetReferences(),
      },
    });
    const run = await runCli(importArgs('--overrides', overridesPath, '--dry-run', '--json'), { env: env() });
    expect(run.exitCode).toBe(0);
    const plan = JSON.parse(run.stdout) as {
      counts: Record<string, number>;
      steps: { kind: string; name: string }[];
    };
    expect(plan.counts).toMatchObject({ create: entries.length - 1, exists: 1 });
    expect(target.record.requests.filter((r) => r.method !== 'GET')).toHaveLength(0);
    const text = await runCli(importArgs('--overrides', overridesPath, '--dry-run'), { env: env() });
    expect(text.stdout).toMatch(/exists\s+\S+: already in the target/);
  });

  describe('pre-flight refusals (exit 3, nothing sent)', () => {
    it('more creates than --max-changes', async () => {
      const run = await runCli(importArgs('--overrides', overridesPath, '--max-changes', '3'), {
        env: env(),
      });
      expect(run.exitCode).toBe(3);
      expect(run.stderr).toMatch(/--max-changes 3/);
      expect(countCreatePosts(target)).toBe(0);
    });
    it('an unset ${env:..} variable', async () => {
      const partial: Record<string, string | undefined> = { ...env() };
      delete partial.SECRET_0;
      const run = await runCli(importArgs('--overrides', overridesPath), { env: partial });
      expect(run.exitCode).toBe(3);
      expect(run.stderr).toMatch(/unresolved placeholder: set the environment variable SECRET_0/);
      expect(countCreatePosts(target)).toBe(0);
    });
    it('a protected target without --confirm', async () => {
      const config = join(work, 'dds-migrate.config.json');
      await writeFile(
        config,
        JSON.stringify({ environments: { dr: { url: target.url, tokenEnv: 'DR_TOKEN', protected: true } } }),
      );
      const args = [
        'import',
        snapshot,
        '--to',
        'dr',
        '--config',
        config,
        '--overrides',
        overridesPath,
        '--journal',
        join(work, 'j.jsonl'),
      ];
      const run = await runCli(args, { env: { ...secretEnv, DR_TOKEN: target.token } });
      expect(run.exitCode).toBe(3);
      expect(run.stderr).toMatch(/dr is a protected environment; pass --confirm dr to write to it/);
      expect(countCreatePosts(target)).toBe(0);
      const confirmed = await runCli([...args, '--confirm', 'dr', '--only', entries[0]?.name as string], {
        env: { ...secretEnv, DR_TOKEN: target.token },
      });
      expect(confirmed.exitCode).toBe(0);
      expect(countCreatePosts(target)).toBe(1);
    });
    it('the environment the snapshot came from, unless --allow-same-source', async () => {
      const own = join(work, 'own.snapshot.jsonl');
      await writeSnapshotFromEmulator(target, own);
      const run = await runCli(['import', own, '--to', target.url, '--journal', join(work, 'own.j')], {
        env: env(),
      });
      expect(run.exitCode).toBe(3);
      expect(run.stderr).toMatch(/--allow-same-source/);
      const allowed = await runCli(
        ['import', own, '--to', target.url, '--journal', join(work, 'own.j'), '--allow-same-source'],
        { env: env() },
      );
      expect(allowed.exitCode).toBe(0);
    });
    it('--on-conflict fail with a name already in the target', async () => {
      const first = entries[0]?.name as string;
      await runCli(
        importArgs('--overrides', overridesPath, '--only', first, '--journal', join(work, 'other.j')),
        { env: env() },
      );
      const run = await runCli(importArgs('--overrides', overridesPath, '--on-conflict', 'fail'), {
        env: env(),
      });
      expect(run.exitCode).toBe(3);
      expect(run.stderr).toContain(`${first}: already exists in the target`);
      expect(target.store.connections).toHaveLength(1);
    });
  });

  it('--on-conflict rename creates "<name> (2)"', async () => {
    const first = entries[0]?.name as string;
    await runCli(
      importArgs('--overrides', overridesPath, '--only', first, '--journal', join(work, 'other.j')),
      { env: env() },
    );
    const report = join(work, 'r.jsonl');
    const run = await runCli(
      importArgs(
        '--overrides',
        overridesPath,
        '--only',
        first,
        '--on-conflict',
        'rename',
        '--report',
        report,
      ),
      { env: env() },
    );
    expect(run.exitCode).toBe(0);
    expect(target.store.getConnection(`${first} (2)`)).toBeDefined();
    expect(JSON.parse(await readFile(report, 'utf8'))).toMatchObject({
      outcome: 'renamed',
      targetName: `${first} (2)`,
    });

    // The same command again: the renamed copy is there, so nothing is created a second time.
    const again = await runCli(
      importArgs('--overrides', overridesPath, '--only', first, '--on-conflict', 'rename'),
      { env: env() },
    );
    expect(again.exitCode).toBe(0);
    expect(target.store.getConnection(`${first} (3)`)).toBeUndefined();
    expect(target.store.connections.filter((c) => c.name.startsWith(first))).toHaveLength(2);
  });

  it('refuses a journal bound to another snapshot or target (exit 2)', async () => {
    const one = entries[0]?.name as string;
    const ok = await runCli(importArgs('--overrides', overridesPath, '--only', one), { env: env() });
    expect(ok.exitCode).toBe(0);
    const other = join(work, 'other.snapshot.jsonl');
    await writeSnapshotFromEmulator(source, other, { only: (c) => c.name !== one });
    const bySnapshot = await runCli(
      [
        'import',
        other,
        '--to',
        target.url,
        '--journal',
        join(work, 'journal.jsonl'),
        '--overrides',
        overridesPath,
      ],
      { env: env() },
    );
    expect(bySnapshot.exitCode).toBe(2);
    expect(bySnapshot.stderr).toMatch(/another snapshot/);
    const second = await startEmulator({ data: { connections: [], ...targetReferences() } });
    try {
      const byTarget = await runCli(
        [
          'import',
          snapshot,
          '--to',
          second.url,
          '--journal',
          join(work, 'journal.jsonl'),
          '--overrides',
          overridesPath,
        ],
        {
          env: { ...env(), DDS_TARGET_TOKEN: second.token },
        },
      );
      expect(byTarget.exitCode).toBe(2);
      expect(byTarget.stderr).toMatch(/another target/);
      expect(countCreatePosts(second)).toBe(0);
    } finally {
      await second.close();
    }
  });

  it('refuses a concurrent run holding the lock, and takes over a dead one', async () => {
    const journal = join(work, 'journal.jsonl');
    const { hostname } = await import('node:os');
    const { spawn, spawnSync } = await import('node:child_process');
    // A live process other than this one holds the lock (our own pid would be a dead namesake's).
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      await writeFile(
        `${journal}.lock`,
        JSON.stringify({ pid: holder.pid, hostname: hostname(), startedAt: 'now' }),
      );
      const locked = await runCli(importArgs('--overrides', overridesPath), { env: env() });
      expect(locked.exitCode).toBe(2);
      expect(locked.stderr).toMatch(/Another import is using this journal/);
      expect(countCreatePosts(target)).toBe(0);
    } finally {
      holder.kill('SIGKILL');
    }
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    await writeFile(
      `${journal}.lock`,
      JSON.stringify({ pid: dead, hostname: hostname(), startedAt: 'then' }),
    );
    const run = await runCli(importArgs('--overrides', overridesPath), { env: env() });
    expect(run.exitCode).toBe(0);
    await expect(stat(`${journal}.lock`)).rejects.toThrow();
  });

  it('creates exactly once through 500s, resets, HTML 502s, commit-then-500 and a 429 rate limit', async () => {
    await target.close();
    target = await startEmulator({
      data: { connections: [], ...targetReferences() },
      faults:
        '500:0.08@POST:/ds_connections,reset:0.08@POST:/ds_connections,html-502:0.08@POST:/ds_connections,commit-then-500:0.1@POST:/ds_connections,commit-then-drop:0.05@POST:/ds_connections,500:0.05@GET:/ds_connections/*',
      rateLimit: 30,
      seed: 7,
    });
    const run = await runCli(importArgs('--overrides', overridesPath, '--concurrency', '8', '--json'), {
      env: env(),
    });
    expect(run.stderr).not.toMatch(/error/);
    expect(run.exitCode).toBe(0);
    for (const e of entries) expect(target.record.createCount(e.name)).toBe(1);
    expect(target.store.connections).toHaveLength(entries.length);
    const faults = new Set(target.record.requests.map((r) => r.fault));
    for (const f of ['500', 'reset', 'html-502', 'commit-then-500']) expect(faults).toContain(f);
    expect(target.record.requests.some((r) => r.status === 429)).toBe(true);
    const result = JSON.parse(run.stdout) as { counts: { created: number; failed: number } };
    expect(result.counts).toMatchObject({ created: entries.length, failed: 0 });
  });
});
