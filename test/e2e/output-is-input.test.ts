/**
 * An output named as the snapshot the command reads (`verify --report`, `import --report`, `overrides
 * init -o`, even with `--force`) is refused before anything is written or sent: the snapshot, a backup,
 * was replaced by report lines (against the emulator on 127.0.0.1, real HTTP).
 */
import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { fixturesDir } from '../../src/paths.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let emu: RunningEmulator | undefined;
afterEach(async () => {
  await emu?.close();
  emu = undefined;
});

describe('an output that is the snapshot read', () => {
  it('is refused (exit 2), the snapshot left as it was, nothing sent', async () => {
    emu = await startEmulator({ data: join(fixturesDir(), 'environments', 'prod.json') });
    const env = { DDS_TOKEN: emu.token, DDS_SOURCE_TOKEN: emu.token, DDS_TARGET_TOKEN: emu.token };
    const dir = await makeTempDir('output-is-input-');
    const snapshot = join(dir, 'prod.snapshot.jsonl');
    expect((await runCli(['export', '--from', emu.url, '-o', snapshot], { env })).exitCode).toBe(0);
    const before = await readFile(snapshot);
    // The same file by another spelling of its path, too.
    const other = join(dir, '.', relative(dir, snapshot));
    emu.record.reset();
    for (const args of [
      ['verify', snapshot, '--env', emu.url, '--report', other],
      ['import', snapshot, '--to', emu.url, '--report', snapshot, '--journal', join(dir, 'j.jsonl')],
      ['overrides', 'init', snapshot, '-o', snapshot, '--force'],
    ]) {
      const run = await runCli(args, { env, cwd: dir });
      expect(run.exitCode, `${args[0]}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toMatch(/is the file this command reads: writing it would replace it/);
      expect(await readFile(snapshot)).toEqual(before);
    }
    expect(emu.record.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });
});
