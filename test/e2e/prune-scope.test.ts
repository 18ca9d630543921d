/**
 * `import --prune` deletes only within what the snapshot covers: none of the target's connections when
 * the snapshot holds no connections (`export --include profiles`), only those of its types or names when
 * it was exported with `--type` or `--name`; a snapshot chosen by id refuses `--prune` (against the
 * emulator on 127.0.0.1, real HTTP).
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { fixturesDir } from '../../src/paths.js';
import { send } from '../emulator/raw-http.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let emulators: RunningEmulator[] = [];
afterEach(async () => {
  await Promise.all(emulators.map((e) => e.close()));
  emulators = [];
});

async function twoEnvironments() {
  const prod = join(fixturesDir(), 'environments', 'prod.json');
  const source = await startEmulator({ data: prod });
  const target = await startEmulator({ data: prod });
  emulators.push(source, target);
  // The target holds one s3 and one non-s3 connection the source lacks.
  const [s3, other] = [
    target.store.connections.find((c) => c.type === 's3'),
    target.store.connections.find((c) => c.type !== 's3'),
  ];
  if (s3 === undefined || other === undefined) throw new Error('prod lacks an s3 or another type');
  const dir = await makeTempDir('prune-scope-');
  const env = { DDS_SOURCE_TOKEN: source.token, DDS_TARGET_TOKEN: target.token };
  const exportTo = async (name: string, ...args: string[]) => {
    const path = join(dir, name);
    const run = await runCli(['export', '--from', source.url, '-o', path, ...args], { env });
    expect(run.exitCode, run.stderr).toBe(0);
    return path;
  };
  const deletes = () =>
    target.record.requests.filter((r) => r.method === 'DELETE' && r.path.includes('/ds_connections/'));
  return { source, target, dir, env, exportTo, deletes, s3: s3.name, other: other.name };
}

describe('import --prune within the snapshot', () => {
  it('a snapshot of scan profiles only deletes no connection', async () => {
    const t = await twoEnvironments();
    const snapshot = await t.exportTo('profiles.jsonl', '--include', 'profiles');
    const before = t.target.store.connections.length;
    const run = await runCli(
      ['import', snapshot, '--to', t.target.url, '--prune', '--journal', join(t.dir, 'p.j')],
      { env: t.env },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(t.deletes()).toEqual([]);
    expect(t.target.store.connections).toHaveLength(before);
    const diff = await runCli(['diff', '--from', snapshot, '--to', t.target.url, '--format', 'json'], {
      env: { DDS_TOKEN: t.target.token },
    });
    expect(diff.exitCode, diff.stdout + diff.stderr).toBe(0);
  });

  it('a snapshot exported with --type s3 prunes s3 connections only', async () => {
    const t = await twoEnvironments();
    // Two target-only connections: one s3, one of another type.
    for (const c of [
      { name: 'zz-extra-s3', type: 's3', bucket_name: 'b', aws_region: 'eu-west-1', isIamRoleAuth: true },
      { name: 'zz-extra-other', type: 'custom-type', description: 'x' },
    ]) {
      const made = await send(t.target.url, 'POST', '/api/v1/ds_connections', {
        token: t.target.token,
        body: { ds_connection: c },
      });
      expect(made.status).toBeLessThan(300);
    }
    const snapshot = await t.exportTo('s3.jsonl', '--type', 's3');
    const run = await runCli(['import', snapshot, '--to', t.target.url, '--prune', '--dry-run'], {
      env: t.env,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/delete +zz-extra-s3/);
    expect(run.stdout).not.toMatch(/zz-extra-other/);
    expect(run.stdout).not.toMatch(new RegExp(`delete +${t.other}`));
    // diff names what that import would change: within the snapshot's types too.
    const diff = await runCli(['diff', '--from', snapshot, '--to', t.target.url, '--format', 'json'], {
      env: { DDS_TOKEN: t.target.token },
    });
    expect(diff.stdout).toContain('zz-extra-s3');
    expect(diff.stdout).not.toContain('zz-extra-other');
    expect(diff.stdout).not.toContain(`"${t.other}"`);
  });

  it('a snapshot chosen by id refuses --prune before anything is sent (exit 2)', async () => {
    const t = await twoEnvironments();
    const id = String(t.source.store.connections[0]?._id);
    const snapshot = await t.exportTo('ids.jsonl', '--ids', id);
    t.target.record.reset();
    const run = await runCli(['import', snapshot, '--to', t.target.url, '--prune'], { env: t.env });
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toMatch(/--prune: the snapshot holds connections chosen by id/);
    expect(t.target.record.requests).toEqual([]);
  });
});
