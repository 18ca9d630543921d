/**
 * A target that changes while dds-migrate lists it (other writers: nothing pins a list between two
 * pages). A loopback proxy in front of the emulator deletes or inserts a connection of an earlier page
 * between two pages; every command either gives the complete and correct result or exits 5 with one
 * line: never exit 0 with an item missing or doubled.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { generateConnections, type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { direct, proxyOf as startListProxy } from '../helpers/list-proxy.js';
import { runCli } from '../helpers/run-cli.js';
import { writeSnapshotFile } from '../helpers/snapshot-file.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

/** A proxy to `emu` that runs `change(n)` before it forwards the n-th list request; closed after the test. */
async function proxyOf(emu: RunningEmulator, change: (n: number) => Promise<void>): Promise<string> {
  const proxy = await startListProxy(emu, change);
  cleanups.push(() => proxy.close());
  return proxy.url;
}

const connections = generateConnections(67, { seed: 31 });
const newcomer = generateConnections(1, { seed: 77 })[0] as (typeof connections)[number];

async function target(): Promise<RunningEmulator> {
  const emu = await startEmulator({ port: 0, maxPageSize: 10, data: { connections } });
  cleanups.push(() => emu.close());
  return emu;
}

function names(stdout: string): string[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => String((JSON.parse(l) as { name: unknown }).name));
}

describe('a connection deleted from an earlier page between two pages', () => {
  it('connections list gives every connection once, none of those that stayed missing', async () => {
    const emu = await target();
    const gone = connections[2]?.name as string;
    const url = await proxyOf(emu, async (n) => {
      if (n === 3)
        expect(await direct(emu, 'DELETE', `/api/v1/ds_connections/${encodeURIComponent(gone)}`)).toBe(200);
    });
    const run = await runCli(['connections', 'list', '--env', url, '--format', 'ndjson'], {
      env: { DDS_TOKEN: emu.token },
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const listed = names(run.stdout);
    expect(new Set(listed).size).toBe(listed.length);
    // Handed out before it was deleted: it is there once; every other connection too.
    expect(new Set(listed)).toEqual(new Set(connections.map((c) => c.name)));
  });

  it("export --name '*' holds every connection that stayed", async () => {
    const emu = await target();
    const gone = connections[1]?.name as string;
    const url = await proxyOf(emu, async (n) => {
      if (n === 2) await direct(emu, 'DELETE', `/api/v1/ds_connections/${encodeURIComponent(gone)}`);
    });
    const dir = await makeTempDir('list-changes-export-');
    const out = join(dir, 'all.snapshot.jsonl');
    const run = await runCli(
      ['export', '--from', url, '--name', '*', '--include', 'connections', '-o', out],
      {
        env: { DDS_SOURCE_TOKEN: emu.token },
      },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    const { readFile } = await import('node:fs/promises');
    const lines = (await readFile(out, 'utf8')).trimEnd().split('\n').slice(1, -1);
    const exported = lines.map((l) => String((JSON.parse(l) as { name: unknown }).name));
    expect(exported).toHaveLength(66);
    expect(new Set(exported)).toEqual(new Set(connections.map((c) => c.name).filter((n) => n !== gone)));
  });
});

describe('the existence checks of an import', () => {
  it('a connection deleted from page 1 while page 2 is asked: no create is planned for a name that exists', async () => {
    const emu = await target();
    // The target lists in creation order (the seed's): the third one is on the first page of 10.
    const gone = connections[2]?.name as string;
    const url = await proxyOf(emu, async (n) => {
      if (n === 2) await direct(emu, 'DELETE', `/api/v1/ds_connections/${encodeURIComponent(gone)}`);
    });
    const dir = await makeTempDir('list-changes-import-');
    const snapshot = join(dir, 'same.snapshot.jsonl');
    await writeSnapshotFile(snapshot, connections);
    const run = await runCli(['import', snapshot, '--to', url, '--dry-run'], {
      env: { DDS_TARGET_TOKEN: emu.token },
      cwd: dir,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    // The connection on the next page's boundary (shifted onto page 1 by the delete) is not missed: only
    // the deleted one may be planned as a create (it was already read as existing before it went).
    const planned = run.stdout.split('\n').filter((l) => /^\s+create\s/.test(l));
    expect(planned.every((l) => l.includes(gone))).toBe(true);
    const exists = run.stdout.split('\n').filter((l) => /^\s+exists\s/.test(l));
    expect(exists.length + planned.length).toBe(67);
    expect(exists.length).toBeGreaterThanOrEqual(66);
  });
});

describe('a connection inserted between two pages', () => {
  it('connections list gives it once, with every other connection', async () => {
    const emu = await target();
    const url = await proxyOf(emu, async (n) => {
      if (n === 2)
        await direct(emu, 'POST', '/api/v1/ds_connections', {
          ds_connection: { ...newcomer, name: 'aa-newcomer' },
        });
    });
    const run = await runCli(['connections', 'list', '--env', url, '--format', 'ndjson'], {
      env: { DDS_TOKEN: emu.token },
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const listed = names(run.stdout);
    expect(listed).toHaveLength(68);
    expect(new Set(listed)).toEqual(new Set([...connections.map((c) => c.name), 'aa-newcomer']));
  });

  it('a target that changes on every read: connections list and import --dry-run exit 5 with one line', async () => {
    const emu = await target();
    let added = 0;
    const url = await proxyOf(emu, async (n) => {
      if (n % 2 === 0) {
        const [extra] = generateConnections(1, { seed: 1000 + added });
        added += 1;
        await direct(emu, 'POST', '/api/v1/ds_connections', {
          ds_connection: { ...extra, name: `zz-extra-${added}` },
        });
      }
    });
    const list = await runCli(['connections', 'list', '--env', url, '--format', 'ndjson'], {
      env: { DDS_TOKEN: emu.token },
    });
    expect(list.exitCode).toBe(5);
    expect(list.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(list.stderr).toMatch(/changed while its connections were listed/);
    const dir = await makeTempDir('list-changes-busy-');
    const snapshot = join(dir, 'same.snapshot.jsonl');
    await writeSnapshotFile(snapshot, connections);
    const run = await runCli(['import', snapshot, '--to', url, '--dry-run'], {
      env: { DDS_TARGET_TOKEN: emu.token },
      cwd: dir,
    });
    expect(run.exitCode).toBe(5);
    expect(run.stderr).toMatch(/changed while its connections were listed/);
  });
});
