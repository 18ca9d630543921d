/**
 * The profile phase's `--on-conflict` (update, rename, fail) and `--prune`, through the import workflow
 * (real HTTP client, emulator on 127.0.0.1): an existing profile that differs is PUT, an equal one is
 * left alone, one the snapshot does not hold is deleted, and a re-run sends nothing.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/api/http.js';
import { DEFAULT_SCAN_TEMPLATES, type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { PreflightError } from '../../src/errors.js';
import { importSnapshot } from '../../src/importer/import-snapshot.js';
import type { ImportOptions } from '../../src/importer/import-types.js';
import { createSilentLogger } from '../../src/log.js';
import type { Connection } from '../../src/model/connection.js';
import type { SnapshotScanProfile } from '../../src/model/scan-profile.js';
import { createSnapshotHeader } from '../../src/snapshot/format.js';
import { writeSnapshot } from '../../src/snapshot/write.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { makeEnvironment } from '../http/client-fixture.js';

const TEMPLATE = DEFAULT_SCAN_TEMPLATES[0]?._id as string;
const DAILY = { cronExpression: '0 2 * * *', timeZone: 'UTC' };
const WEEKLY = { cronExpression: '0 3 * * 0', timeZone: 'UTC' };

const started: RunningEmulator[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((e) => e.close()));
});

const CONNECTIONS = [
  { _id: 'a0000000000000000000000a', name: 'alpha', type: 'custom-type' },
  { _id: 'b0000000000000000000000b', name: 'beta', type: 'custom-type' },
] as Connection[];

function profile(name: string, names: string[], schedule: object): SnapshotScanProfile {
  return {
    scanProfile: {
      _id: `${name}-src`,
      name,
      dataSourceList: names.map((n) => CONNECTIONS.find((c) => c.name === n)?._id as string),
      scanTemplateId: TEMPLATE,
      schedule: schedule as never,
      createdAt: '2024-01-01T00:00:00.000Z',
    },
    dataSourceNames: names,
  };
}

async function setUp(): Promise<{ target: RunningEmulator; snapshot: string; dir: string }> {
  const dir = await makeTempDir('import-profiles-converge-');
  const snapshot = join(dir, 's.snapshot.jsonl');
  const header = createSnapshotHeader({
    tool: 'test',
    source: { url: 'https://prod.example.com', environment: 'prod' },
    include: ['connections', 'scanProfiles'],
  });
  await writeSnapshot({ path: snapshot }, header, CONNECTIONS, {
    profiles: () => [
      profile('nightly', ['alpha', 'beta'], DAILY),
      profile('weekly', ['beta'], WEEKLY),
      profile('new-one', ['alpha'], DAILY),
    ],
  });
  // The target: the same connections under other ids, `nightly` with another schedule and order,
  // `weekly` equal (but for server fields), and `extra`, which the snapshot does not hold.
  const ta = 'aa000000000000000000000a';
  const tb = 'bb000000000000000000000b';
  const target = await startEmulator({
    data: {
      connections: [
        { _id: ta, name: 'alpha', type: 'custom-type' },
        { _id: tb, name: 'beta', type: 'custom-type' },
      ],
      scanProfiles: [
        { name: 'nightly', dataSourceList: [tb, ta], scanTemplateId: TEMPLATE, schedule: WEEKLY },
        { name: 'weekly', dataSourceList: [tb], scanTemplateId: TEMPLATE, schedule: WEEKLY },
        { name: 'extra', dataSourceList: ['alpha'], scanTemplateId: TEMPLATE, schedule: DAILY },
      ],
    },
  });
  started.push(target);
  return { target, snapshot, dir };
}

function options(snapshot: string, dir: string, extra: Partial<ImportOptions>): ImportOptions {
  return {
    snapshot,
    concurrency: 1,
    rate: undefined,
    onConflict: 'skip',
    overrides: undefined,
    only: undefined,
    maxChanges: undefined,
    dryRun: false,
    journal: join(dir, `${Math.random().toString(36).slice(2)}.journal.jsonl`),
    idMap: undefined,
    report: undefined,
    confirm: undefined,
    allowSameSource: false,
    schemas: undefined,
    templatesFromTarget: false,
    ...extra,
  };
}

function run(target: RunningEmulator, opts: ImportOptions, isProtected = false) {
  const environment = makeEnvironment({
    url: target.url,
    token: target.token,
    label: 'dr',
    name: 'dr',
    protected: isProtected,
  });
  return importSnapshot(
    opts,
    {
      resolveTarget: async () => environment,
      createClient: (env, clientOptions) =>
        createHttpClient(env, { log: createSilentLogger(), ...(clientOptions ?? {}) }),
      env: {},
      log: createSilentLogger(),
      signal: new AbortController().signal,
    },
    () => undefined,
  );
}

function writes(target: RunningEmulator): string[] {
  return target.record.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`);
}

describe('profile phase: --on-conflict update and --prune', () => {
  it('a dry run whose only writes are scan profiles, into a protected target, says the real run needs --confirm', async () => {
    const { target, snapshot, dir } = await setUp();
    const result = await run(target, options(snapshot, dir, { dryRun: true }), true);
    if (result.kind !== 'dry-run') throw new Error(`not a dry run: ${result.kind}`);
    // Both connections exist (skipped): the one write is the profile `new-one`.
    expect(result.plan.changes).toBe(0);
    expect(result.profilePlan.steps.filter((s) => s.kind === 'create').map((s) => s.name)).toEqual([
      'new-one',
    ]);
    expect(result.confirmRequired).toBe('dr');
    const confirmed = await run(target, options(snapshot, dir, { dryRun: true, confirm: 'dr' }), true);
    expect(confirmed.kind === 'dry-run' && confirmed.confirmRequired).toBeUndefined();
    expect(writes(target)).toEqual([]);
  });

  it('updates the different one, leaves the equal one, creates the new one, prunes the extra one; a re-run sends nothing', async () => {
    const { target, snapshot, dir } = await setUp();
    const opts = options(snapshot, dir, { profileOnConflict: 'update', prune: true });
    const result = await run(target, opts);
    if (result.kind !== 'ran') throw new Error('expected a run');
    expect(result.profileReport.map((l) => [l.name, l.outcome])).toEqual([
      ['new-one', 'created'],
      ['nightly', 'updated'],
      ['weekly', 'unchanged'],
      ['extra', 'deleted'],
    ]);
    const byName = (n: string) => target.store.profiles.find((p) => p.name === n);
    expect(byName('nightly')).toMatchObject({
      dataSourceList: ['aa000000000000000000000a', 'bb000000000000000000000b'],
      schedule: DAILY,
    });
    expect(byName('extra')).toBeUndefined();
    expect(byName('new-one')?.dataSourceList).toEqual(['aa000000000000000000000a']);
    expect(target.store.scansStarted).toHaveLength(0);
    const sent = writes(target);
    expect(sent.filter((w) => w.startsWith('PUT'))).toHaveLength(1);
    expect(sent.filter((w) => w.startsWith('DELETE'))).toHaveLength(1);
    expect(sent.filter((w) => w.startsWith('POST'))).toEqual(['POST /api/v1/scanProfiles']);

    const again = await run(target, opts);
    if (again.kind !== 'ran') throw new Error('expected a run');
    expect(writes(target)).toEqual(sent);
  });

  it('--on-conflict rename creates "<name> (2)"; fail refuses in pre-flight and sends nothing', async () => {
    const { target, snapshot, dir } = await setUp();
    const refused = await run(target, options(snapshot, dir, { onConflict: 'fail' })).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(PreflightError);
    expect((refused as PreflightError).problems.map((p) => p.message).join('\n')).toMatch(
      /scan profile 'nightly' already exists in the target \(--on-conflict fail\)/,
    );
    expect(writes(target)).toEqual([]);

    const renamed = await run(target, options(snapshot, dir, { profileOnConflict: 'rename' }));
    if (renamed.kind !== 'ran') throw new Error('expected a run');
    expect(
      renamed.profileReport.map((l) => [l.name, l.outcome, 'targetName' in l ? l.targetName : '']),
    ).toEqual([
      ['new-one', 'created', 'new-one'],
      ['nightly', 'renamed', 'nightly (2)'],
      ['weekly', 'renamed', 'weekly (2)'],
    ]);
    expect(target.store.profiles.map((p) => p.name).sort()).toEqual([
      'extra',
      'new-one',
      'nightly',
      'nightly (2)',
      'weekly',
      'weekly (2)',
    ]);
  });
});
