/**
 * Converge and undo, end to end against the emulator: `import --on-conflict update --prune` makes a
 * non-empty target equal to the snapshot with one request per change (and a re-run sends nothing);
 * `diff` names exactly those changes; faults on every write route and re-runs still apply each change
 * once; `undo` puts the target back as it was before the run (secrets from --overrides), and undoing
 * again, or with --dry-run, sends nothing.
 */
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isServerManagedField } from '../../src/connections/server-managed.js';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import type { Connection } from '../../src/model/connection.js';
import { clearRegisteredSecrets, MASK } from '../../src/secrets.js';
import { send } from '../emulator/raw-http.js';
import { runCli } from '../helpers/run-cli.js';
import { buildSecretOverrides, prepareImportSource, writeSnapshotFromEmulator } from './import.helpers.js';

type Row = Record<string, unknown>;

function comparable(c: Row): Row {
  return Object.fromEntries(Object.entries(c).filter(([k]) => !isServerManagedField(k)));
}

/** The target's connections by name, server-managed fields dropped (secrets in clear: the emulator's store). */
function stateOf(emu: RunningEmulator): Map<string, Row> {
  return new Map(emu.store.connections.map((c) => [c.name, comparable(c as unknown as Row)]));
}

const MISSING = ['hr-documents-s3', 'eng-app-mysql', 'sales-drive'];
const STALE = ['finance-invoices-s3', 'finance-sf', 'hr-payroll-pg'];
const EXTRA = ['old-finance-s3', 'old-hr-pg'];

describe('converge and undo (end to end, against the emulator)', () => {
  let source: RunningEmulator;
  let dir: string;
  let snapshot: string;
  let entries: Connection[];
  let overridesPath: string;
  let secretEnv: Record<string, string>;

  beforeAll(async () => {
    ({ source, dir, snapshot, entries, overridesPath, secretEnv } =
      await prepareImportSource('converge-e2e-'));
  });
  afterAll(async () => {
    await source.close();
  });

  /** A target holding identical, stale, extra connections, and missing some of the snapshot's. */
  function seedTarget(): Row[] {
    const rows: Row[] = [];
    for (const c of source.store.connections as unknown as Row[]) {
      const name = String(c.name);
      if (MISSING.includes(name)) continue;
      const copy = structuredClone(c);
      if (STALE.includes(name)) {
        copy.description = 'stale copy';
        if (name === 'hr-payroll-pg') copy.rdb_url = 'jdbc:postgresql://old-host:5432/payroll';
      }
      rows.push(copy);
    }
    const extraFrom = { 'old-finance-s3': 'finance-invoices-s3', 'old-hr-pg': 'hr-payroll-pg' } as const;
    for (const [name, from] of Object.entries(extraFrom)) {
      const copy = structuredClone(source.store.getConnection(from) as unknown as Row);
      delete copy._id;
      rows.push({ ...copy, name, id: name });
    }
    return rows;
  }

  let target: RunningEmulator;
  let work: string;
  const startTarget = async (options: { faults?: string; config?: boolean } = {}) => {
    target = await startEmulator({
      data: { connections: seedTarget() as never },
      ...(options.faults ? { faults: options.faults, seed: 7 } : {}),
    });
  };
  beforeEach(async () => {
    work = await mkdtemp(join(dir, 'run-'));
  });
  afterEach(async () => {
    await target?.close();
    clearRegisteredSecrets();
  });

  const journal = () => join(work, 'journal.jsonl');
  const importArgs = (...extra: string[]) => [
    'import',
    snapshot,
    '--to',
    target.url,
    '--journal',
    journal(),
    '--overrides',
    overridesPath,
    '--no-progress',
    ...extra,
  ];
  const env = () => ({ DDS_TARGET_TOKEN: target.token, ...secretEnv });
  const changes = () => target.record.changes.length;

  /** Overrides for undo: the secrets of the target before the run, from its store. */
  async function writeUndoOverrides(
    pre: Map<string, Row>,
  ): Promise<{ path: string; env: Record<string, string> }> {
    const masked = join(work, 'target-before.snapshot.jsonl');
    const before = await writeSnapshotFromEmulator(target, masked);
    const { overrides, env: undoEnv } = buildSecretOverrides(before, (name, field) => pre.get(name)?.[field]);
    const path = join(work, 'undo-overrides.json');
    await writeFile(path, JSON.stringify(overrides));
    return { path, env: undoEnv };
  }

  /** The snapshot's connections equal the target's on every field (secrets included), and nothing else is there. */
  function expectConverged(): void {
    const state = stateOf(target);
    expect([...state.keys()].sort()).toEqual(entries.map((e) => e.name).sort());
    for (const e of entries) {
      expect(state.get(e.name)).toEqual(comparable(source.store.getConnection(e.name) as unknown as Row));
    }
  }

  it('diff names exactly what import --on-conflict update --prune does, one request per change; a re-run sends nothing; undo takes it back', async () => {
    await startTarget();
    const pre = stateOf(target);
    const undoOverrides = await writeUndoOverrides(pre);

    const diff = await runCli(['diff', '--from', snapshot, '--to', target.url, '--format', 'json'], {
      env: env(),
    });
    expect(diff.exitCode).toBe(1);
    const d = JSON.parse(diff.stdout) as { added: string[]; removed: string[]; changed: { name: string }[] };
    expect(d.added).toEqual([...MISSING].sort());
    expect(d.removed).toEqual([...EXTRA].sort());
    expect(d.changed.map((c) => c.name)).toEqual([...STALE].sort());

    const text = await runCli(['diff', '--from', snapshot, '--to', target.url], { env: env() });
    const lines = text.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^from prod\.snapshot\.jsonl \(snapshot\) to 127\.0\.0\.1:\d+ .*\+ only in from, - only in to, ~ changed/,
    );
    expect(lines).toContain('+ hr-documents-s3 (s3)');
    expect(lines).toContain('- old-finance-s3 (s3)');
    expect(lines).toContain('~ finance-sf (snowflake)');

    const dry = await runCli([...importArgs('--on-conflict', 'update', '--prune', '--dry-run'), '--json'], {
      env: env(),
    });
    expect(dry.exitCode).toBe(0);
    const plan = JSON.parse(dry.stdout) as { steps: { kind: string; name: string }[] };
    const named = (kind: string) =>
      plan.steps
        .filter((s) => s.kind === kind)
        .map((s) => s.name)
        .sort();
    expect(named('create')).toEqual(d.added);
    expect(named('delete')).toEqual(d.removed);
    expect(named('update')).toEqual(d.changed.map((c) => c.name));
    expect(changes()).toBe(0);

    const run = await runCli(importArgs('--on-conflict', 'update', '--prune'), { env: env() });
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(/updated\s+3/);
    expect(run.stdout).toMatch(/deleted\s+2/);
    expectConverged();
    for (const name of MISSING) expect(target.record.changeCount(name, 'create')).toBe(1);
    for (const name of STALE) expect(target.record.changeCount(name, 'update')).toBe(1);
    for (const name of EXTRA) expect(target.record.changeCount(name, 'delete')).toBe(1);
    expect(changes()).toBe(MISSING.length + STALE.length + EXTRA.length);

    // The journal holds before-images, never a credential value.
    const journalText = await readFile(journal(), 'utf8');
    for (const value of Object.values(secretEnv)) expect(journalText).not.toContain(value);
    expect(journalText).toContain('"op":"delete"');
    expect(journalText).toContain(MASK);

    const again = await runCli(importArgs('--on-conflict', 'update', '--prune'), { env: env() });
    expect(again.exitCode).toBe(0);
    expect(changes()).toBe(MISSING.length + STALE.length + EXTRA.length);

    // undo: the dry run sends nothing; without the secrets the pre-flight names them (exit 3, nothing written).
    const before = changes();
    const undoDry = await runCli(['undo', journal(), '--dry-run', '--overrides', undoOverrides.path], {
      env: { ...env(), ...undoOverrides.env },
    });
    expect(undoDry.exitCode).toBe(0);
    expect(undoDry.stdout).toMatch(/re-create\s+old-finance-s3/);
    expect(undoDry.stdout).toMatch(/delete\s+eng-app-mysql/);
    expect(changes()).toBe(before);
    const noSecrets = await runCli(['undo', journal()], { env: env() });
    expect(noSecrets.exitCode).toBe(3);
    expect(noSecrets.stderr).toMatch(/old-finance-s3/);
    expect(noSecrets.stderr).toMatch(/Supply the secrets named above with --overrides/);
    expect(noSecrets.stderr).toMatch(/^Pre-flight found \d+ problems?:$/m);
    // With --json the problems are the one result on stdout, not repeated on stderr (as import).
    const noSecretsJson = await runCli(['undo', journal(), '--json'], { env: env() });
    expect(noSecretsJson.exitCode).toBe(3);
    const refusal = JSON.parse(noSecretsJson.stdout) as { ok: boolean; problems: unknown[] };
    expect(refusal).toMatchObject({ ok: false, exitCode: 3 });
    expect(refusal.problems).toHaveLength(
      noSecrets.stderr.split('\n').filter((l) => l.startsWith('  - ')).length,
    );
    expect(noSecretsJson.stderr).not.toMatch(/^ {2}- |Pre-flight found/m);
    expect(changes()).toBe(before);

    const undo = await runCli(['undo', journal(), '--overrides', undoOverrides.path], {
      env: { ...env(), ...undoOverrides.env },
    });
    expect(undo.stderr).not.toMatch(/error/i);
    expect(undo.exitCode).toBe(0);
    expect(stateOf(target)).toEqual(pre);
    expect(changes()).toBe(before + MISSING.length + STALE.length + EXTRA.length);
    // The undo is a run of the same journal.
    const undoText = await readFile(journal(), 'utf8');
    for (const value of [...Object.values(secretEnv), ...Object.values(undoOverrides.env)])
      expect(undoText).not.toContain(value);

    const undoAgain = await runCli(['undo', journal(), '--overrides', undoOverrides.path], {
      env: { ...env(), ...undoOverrides.env },
    });
    expect(undoAgain.exitCode).toBe(0);
    expect(changes()).toBe(before + MISSING.length + STALE.length + EXTRA.length);
  });

  it("undo holds the import's journal lock: refused while a live run holds it (exit 2, nothing sent); a dry run only reads", async () => {
    await startTarget();
    const run = await runCli(importArgs('--on-conflict', 'update', '--prune'), { env: env() });
    expect(run.exitCode).toBe(0);
    const before = changes();
    // PID 1 on this host is alive: the lock is a live run's, never taken over.
    await writeFile(
      `${journal()}.lock`,
      `${JSON.stringify({ pid: 1, hostname: hostname(), startedAt: new Date().toISOString() })}\n`,
    );
    const locked = await runCli(['undo', journal()], { env: env() });
    expect(locked.exitCode).toBe(2);
    expect(locked.stderr).toMatch(/Another import is using this journal/);
    expect(changes()).toBe(before);
    const dry = await runCli(['undo', journal(), '--dry-run'], { env: env() });
    expect(dry.stdout).toMatch(/delete\s+eng-app-mysql/);
    expect(changes()).toBe(before);
    expect(JSON.parse(await readFile(`${journal()}.lock`, 'utf8')).pid).toBe(1);
  });

  it('undo puts back the before-image; --overrides gives it secrets only, never a field the image has', async () => {
    await startTarget();
    const pre = stateOf(target);
    const undoOverrides = await writeUndoOverrides(pre);
    // The same non-secret override for the import and the undo, as an operator keeps one file.
    const withDescription = async (path: string, name: string) => {
      const ov = JSON.parse(await readFile(path, 'utf8')) as { all?: Record<string, unknown> };
      const out = join(work, name);
      await writeFile(
        out,
        JSON.stringify({ ...ov, all: { ...(ov.all ?? {}), description: 'set by overrides' } }),
      );
      return out;
    };
    const importOverrides = await withDescription(overridesPath, 'import-overrides.json');
    const args = importArgs('--on-conflict', 'update', '--only', 'finance-invoices-s3');
    args[args.indexOf(overridesPath)] = importOverrides;
    const imported = await runCli(args, { env: env() });
    expect(imported.exitCode, imported.stderr).toBe(0);
    expect(stateOf(target).get('finance-invoices-s3')?.description).toBe('set by overrides');

    const undoFile = await withDescription(undoOverrides.path, 'undo-overrides-all.json');
    const undo = await runCli(['undo', journal(), '--overrides', undoFile], {
      env: { ...env(), ...undoOverrides.env },
    });
    expect(undo.exitCode).toBe(0);
    expect(stateOf(target).get('finance-invoices-s3')).toEqual(pre.get('finance-invoices-s3'));
  });

  it('undo puts back an update whose snapshot held its secrets masked (left out of the PUT): not "changed since"', async () => {
    await startTarget();
    const pre = stateOf(target);
    const [stale] = STALE as [string];
    // No --overrides: the secrets stay masked, the PUT leaves them out and the service keeps its own.
    const args = importArgs('--on-conflict', 'update', '--only', stale);
    args.splice(args.indexOf('--overrides'), 2);
    const imported = await runCli(args, { env: env() });
    expect(imported.exitCode, imported.stderr).toBe(0);
    expect(target.record.changeCount(stale, 'update')).toBe(1);
    const undo = await runCli(['undo', journal()], { env: env() });
    expect(undo.exitCode, undo.stdout + undo.stderr).toBe(0);
    expect(undo.stdout).toMatch(/restored +1 /);
    expect(stateOf(target).get(stale)).toEqual(pre.get(stale));
  });

  it('undo leaves what someone changed after the run: an update edited since, a delete created again; the rest is put back', async () => {
    await startTarget();
    const pre = stateOf(target);
    const undoOverrides = await writeUndoOverrides(pre);
    expect((await runCli(importArgs('--on-conflict', 'update', '--prune'), { env: env() })).exitCode).toBe(0);
    // After the run, by hand: one updated connection edited again, one pruned connection created again.
    const [edited, ...putBack] = STALE as [string, ...string[]];
    const [recreated, ...reCreatedByUndo] = EXTRA as [string, ...string[]];
    const now = target.store.getConnection(edited) as unknown as Row;
    const edit = await send(target.url, 'PUT', `/api/v1/ds_connections/${edited}`, {
      token: target.token,
      body: { ds_connection: { ...now, description: 'edited after the run' } },
    });
    expect(edit.status).toBeLessThan(300);
    const made = await send(target.url, 'POST', '/api/v1/ds_connections', {
      token: target.token,
      body: { ds_connection: { name: recreated, type: 'custom-type', description: 'made again by hand' } },
    });
    expect(made.status).toBeLessThan(300);
    const kept = stateOf(target);
    target.record.reset();

    const undo = await runCli(['undo', journal(), '--overrides', undoOverrides.path], {
      env: { ...env(), ...undoOverrides.env },
    });
    expect(undo.exitCode, undo.stderr).toBe(1);
    expect(undo.stdout).toMatch(
      new RegExp(
        `left ${edited}: changed since the import updated it \\(/description; putting it back would lose that change\\)`,
      ),
    );
    expect(undo.stdout).toMatch(new RegExp(`left ${recreated}: created again since the import deleted it`));
    expect(target.record.changeCount(edited, 'update')).toBe(0);
    expect(target.record.changeCount(recreated, 'update')).toBe(0);
    const after = stateOf(target);
    expect(after.get(edited)).toEqual(kept.get(edited));
    expect(after.get(recreated)).toEqual(kept.get(recreated));
    for (const name of [...putBack, ...reCreatedByUndo]) expect(after.get(name)).toEqual(pre.get(name));
    for (const name of MISSING) expect(after.has(name)).toBe(false);
  });

  it('a prune delete left in doubt and found gone by the resume is journaled deleted: the finished run holds nothing unsettled', async () => {
    await startTarget();
    // Every DELETE is applied and answered 500: the client's retries find the same, the run stops (exit 5).
    target.setFaults('commit-then-500@DELETE:*');
    const args = importArgs('--on-conflict', 'update', '--prune');
    const stopped = await runCli(args, { env: env() });
    expect(stopped.exitCode).toBe(5);
    for (const name of EXTRA) expect(target.store.getConnection(name)).toBeUndefined();
    target.setFaults('');
    const resumed = await runCli(args, { env: env() });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const runs = await runCli(['runs', journal(), '--format', 'json'], { env: env() });
    const listed = JSON.parse(runs.stdout) as { runs: { connections: Record<string, number> }[] };
    expect(listed.runs).toHaveLength(1);
    expect(listed.runs[0]?.connections, JSON.stringify(listed.runs)).toMatchObject({
      deleted: EXTRA.length,
      inDoubt: 0,
    });
  });

  it('--prune --only NAME resumed after the interrupted run deleted NAME: finished, not refused', async () => {
    await startTarget();
    target.setFaults('commit-then-500@DELETE:*');
    const args = importArgs('--prune', '--only', 'old-finance-s3');
    expect((await runCli(args, { env: env() })).exitCode).toBe(5);
    expect(target.store.getConnection('old-finance-s3')).toBeUndefined();
    target.setFaults('');
    // The name is now in neither the snapshot nor the target, only in the run being finished.
    const resumed = await runCli(args, { env: env() });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    const runs = await runCli(['runs', journal(), '--format', 'json'], { env: env() });
    const listed = JSON.parse(runs.stdout) as { runs: { connections: Record<string, number> }[] };
    expect(listed.runs[0]?.connections).toMatchObject({ deleted: 1, inDoubt: 0 });
  });

  it('without --on-conflict update stale ones stay, without --prune extras stay', async () => {
    await startTarget();
    const pre = stateOf(target);
    const run = await runCli(importArgs(), { env: env() });
    expect(run.exitCode).toBe(0);
    const state = stateOf(target);
    for (const name of [...STALE, ...EXTRA]) expect(state.get(name)).toEqual(pre.get(name));
    for (const name of MISSING) expect(target.record.changeCount(name, 'create')).toBe(1);
    expect(changes()).toBe(MISSING.length);
  });

  it('--only narrows a converge: the named stale one updated, the named extra one deleted, nothing else touched', async () => {
    await startTarget();
    const before = stateOf(target);
    const [stale, otherStale] = STALE;
    const [extra, otherExtra] = EXTRA;
    const run = await runCli(
      importArgs('--on-conflict', 'update', '--prune', '--only', `${stale},${extra}`, '--json'),
      { env: env() },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).counts).toMatchObject({ updated: 1, deleted: 1, created: 0 });
    expect(target.record.changeCount(stale as string, 'update')).toBe(1);
    expect(target.record.changeCount(extra as string, 'delete')).toBe(1);
    expect(changes()).toBe(2);
    const after = stateOf(target);
    expect(after.get(stale as string)).toEqual(
      comparable(source.store.getConnection(stale as string) as unknown as Row),
    );
    expect(after.has(extra as string)).toBe(false);
    expect(after.get(otherStale as string)).toEqual(before.get(otherStale as string));
    expect(after.get(otherExtra as string)).toEqual(before.get(otherExtra as string));
    for (const name of MISSING) expect(after.has(name)).toBe(false);
  });

  it('--max-changes counts creates, updates and deletes, and a protected target needs --confirm: refused before any write', async () => {
    await startTarget();
    const tooMany = await runCli(importArgs('--on-conflict', 'update', '--prune', '--max-changes', '7'), {
      env: env(),
    });
    expect(tooMany.exitCode).toBe(3);
    expect(tooMany.stderr).toMatch(/8 changes would be made \(3 creates, 3 updates, 2 deletes\)/);
    const config = join(work, 'protected.config.json');
    await writeFile(
      config,
      JSON.stringify({
        environments: { vault: { url: target.url, tokenEnv: 'VAULT_TOKEN', protected: true } },
      }),
    );
    const args = importArgs('--on-conflict', 'update', '--prune');
    args[3] = 'vault';
    const refused = await runCli([...args, '--config', config], {
      env: { ...secretEnv, VAULT_TOKEN: target.token },
    });
    expect(refused.exitCode).toBe(3);
    expect(refused.stderr).toMatch(/protected/);
    expect(changes()).toBe(0);

    // Undo into the same protected target: refused until --confirm names it, and the hint does not ask for secrets.
    const pre = stateOf(target);
    const undoOverrides = await writeUndoOverrides(pre);
    expect((await runCli(importArgs('--on-conflict', 'update', '--prune'), { env: env() })).exitCode).toBe(0);
    const written = changes();
    const undoEnv = { ...secretEnv, ...undoOverrides.env, VAULT_TOKEN: target.token };
    const undoArgs = [
      'undo',
      journal(),
      '--to',
      'vault',
      '--config',
      config,
      '--overrides',
      undoOverrides.path,
    ];
    const undoRefused = await runCli(undoArgs, { env: undoEnv });
    expect(undoRefused.exitCode).toBe(3);
    expect(undoRefused.stderr).toMatch(/--confirm vault/);
    expect(undoRefused.stderr).not.toMatch(/Supply the secrets/);
    expect(changes()).toBe(written);
    expect((await runCli([...undoArgs, '--confirm', 'vault'], { env: undoEnv })).exitCode).toBe(0);
    expect(stateOf(target)).toEqual(pre);
  });

  it('faults on every write route and re-runs: converged with no create or delete applied twice; undo under faults too', async () => {
    await startTarget({
      faults: [
        'commit-then-drop:0.3@POST:/ds_connections',
        'commit-then-500:0.3@PUT:/ds_connections/*',
        'commit-then-drop:0.3@DELETE:/ds_connections/*',
        '429=0:0.3@PUT:/ds_connections/*',
        'commit-then-500:0.3@DELETE:/ds_connections/*',
      ].join(','),
    });
    const pre = stateOf(target);
    const undoOverrides = await writeUndoOverrides(pre);
    let exit = -1;
    for (let i = 0; i < 10 && exit !== 0; i++) {
      exit = (await runCli(importArgs('--on-conflict', 'update', '--prune'), { env: env() })).exitCode;
    }
    expect(exit).toBe(0);
    expectConverged();
    for (const name of MISSING) expect(target.record.changeCount(name, 'create')).toBe(1);
    for (const name of EXTRA) expect(target.record.changeCount(name, 'delete')).toBe(1);
    const faulted = target.record.requests.filter((r) => r.fault !== null && r.fault !== undefined).length;
    expect(faulted).toBeGreaterThan(0);

    exit = -1;
    for (let i = 0; i < 10 && exit !== 0; i++) {
      exit =
        // Creates whose answer was dropped were found by name: in doubt whose they are, so undo
        // deletes them only when told to (one operator, one journal: they are this run's).
        (
          await runCli(['undo', journal(), '--overrides', undoOverrides.path, '--include-in-doubt'], {
            env: { ...env(), ...undoOverrides.env },
          })
        ).exitCode;
    }
    expect(exit).toBe(0);
    expect(stateOf(target)).toEqual(pre);
    for (const name of MISSING) expect(target.record.changeCount(name, 'delete')).toBe(1);
    for (const name of EXTRA) expect(target.record.changeCount(name, 'create')).toBe(1);
  });
});
