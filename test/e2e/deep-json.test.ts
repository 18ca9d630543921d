/**
 * A snapshot entry nested thousands of levels deep (a damaged or hand-made file) is refused where it is
 * read, naming its line (exit 2, nothing sent), instead of ending in a stack overflow reported as a bug.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { hashEntryLines } from '../../src/snapshot/checksum.js';
import { send } from '../emulator/raw-http.js';
import { numberedConnections, writeOtherWritersSnapshot } from '../helpers/other-writers-snapshot.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let target: RunningEmulator | undefined;
afterEach(async () => {
  await target?.close();
  target = undefined;
});

/** A valid snapshot whose second entry nests `depth` objects deep (itself the first); its checksum made to match. */
async function deepSnapshot(depth: number): Promise<string> {
  const dir = await makeTempDir('deep-json-');
  const path = await writeOtherWritersSnapshot(dir, numberedConnections(3, '86'));
  const lines = (await readFile(path, 'utf8')).split('\n');
  const entry = lines[2] as string;
  lines[2] = `${entry.slice(0, -1)},"nested":${'{"a":'.repeat(depth - 2)}{}${'}'.repeat(depth - 2)}}`;
  const trailer = JSON.parse(lines[4] as string) as Record<string, unknown>;
  lines[4] = JSON.stringify({ ...trailer, sha256: hashEntryLines(lines.slice(1, 4)) });
  await writeFile(path, lines.join('\n'));
  return path;
}

describe('JSON nested too deeply', () => {
  it('validate, diff and import refuse the entry by its line: exit 2, one line, nothing sent', async () => {
    const snapshot = await deepSnapshot(6000);
    target = await startEmulator({ data: { connections: [] } });
    const env = { DDS_TARGET_TOKEN: target.token, DDS_TOKEN: target.token };
    for (const args of [
      ['validate', snapshot],
      ['diff', '--from', snapshot, '--to', target.url],
      ['import', snapshot, '--to', target.url, '--journal', `${snapshot}.journal`],
    ]) {
      const run = await runCli(args, { env });
      expect(run.exitCode, `${args[0]}: ${run.stderr}`).toBe(2);
      const lines = run.stderr.split('\n').filter((l) => l !== '');
      expect(lines, args[0]).toHaveLength(1);
      expect(lines[0]).toMatch(/:3: a value nested more than 1000 levels deep/);
    }
    expect(target.record.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('an entry 1000 levels deep is read as usual', async () => {
    const run = await runCli(['validate', await deepSnapshot(1000)]);
    expect(run.stderr).not.toMatch(/nested/);
    expect(run.exitCode).not.toBe(2);
  });

  it('a connection 1000 levels deep in the service is listed, exported, imported and undone; one deeper is not exported', async () => {
    const nested = (depth: number) => {
      let v: unknown = {};
      for (let i = 2; i < depth; i++) v = { a: v };
      return v;
    };
    const deepOne = (name: string, depth: number) => ({
      name,
      type: 'custom-type',
      description: 'd',
      nested: nested(depth),
    });
    const source = await startEmulator({ data: { connections: [deepOne('deep-1000', 1000)] } });
    target = await startEmulator({ data: { connections: [] } });
    try {
      const dir = await makeTempDir('deep-json-');
      const env = { DDS_TOKEN: source.token, DDS_SOURCE_TOKEN: source.token, DDS_TARGET_TOKEN: target.token };
      const listed = await runCli(['connections', 'list', '--env', source.url, '--format', 'ndjson'], {
        env,
      });
      expect(listed.exitCode, listed.stderr).toBe(0);
      const snapshot = join(dir, 's.jsonl');
      const exported = await runCli(['export', '--from', source.url, '-o', snapshot], { env });
      expect(exported.exitCode, exported.stderr).toBe(0);
      const journal = join(dir, 'j.jsonl');
      const imported = await runCli(['import', snapshot, '--to', target.url, '--journal', journal], { env });
      expect(imported.exitCode, imported.stderr).toBe(0);
      const listedThere = await runCli(['connections', 'list', '--env', target.url], {
        env: { DDS_TOKEN: target.token },
      });
      expect(listedThere.exitCode, listedThere.stderr).toBe(0);
      const undone = await runCli(['undo', journal], { env });
      expect(undone.exitCode, undone.stdout + undone.stderr).toBe(0);
      expect(target.store.connections).toEqual([]);

      const made = await send(source.url, 'POST', '/api/v1/ds_connections', {
        token: source.token,
        body: { ds_connection: deepOne('deep-1001', 1001) },
      });
      expect(made.status).toBeLessThan(300);
      const refused = await runCli(['export', '--from', source.url, '-o', join(dir, 't.jsonl')], { env });
      expect(refused.exitCode).not.toBe(0);
      expect(refused.exitCode).not.toBe(70);
      expect(refused.stderr).toMatch(/nested more than 1000 levels deep/);
    } finally {
      await source.close();
    }
  });

  it('a JSON file argument nested too deeply (profiles create --file) is refused as an input file: exit 2, nothing sent', async () => {
    target = await startEmulator({ data: { connections: [] } });
    const dir = await makeTempDir('deep-json-');
    const file = join(dir, 'profile.json');
    await writeFile(
      file,
      `{"name":"p","scanTemplateId":"t","dataSourceList":[],"x":${'['.repeat(6000)}${']'.repeat(6000)}}`,
    );
    const run = await runCli(['profiles', 'create', '--env', target.url, '--file', file], {
      env: { DDS_TOKEN: target.token },
    });
    expect(run.exitCode, run.stderr).toBe(2);
    expect(run.stderr).toMatch(/profile\.json.*nests more than 1064 levels deep/);
    expect(target.record.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });
});
