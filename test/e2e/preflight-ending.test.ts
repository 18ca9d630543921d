/**
 * A pre-flight refusal points at the fix: masked secrets end on the command that writes the overrides
 * skeleton, and problems that only follow from another (a scan profile naming a refused connection)
 * are counted in one line, not listed one by one (`--verbose` lists them).
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { runCli } from '../helpers/run-cli.js';
import { prepareImportSource, targetReferences } from './import.helpers.js';

const started: RunningEmulator[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((e) => e.close()));
});

describe('a refused pre-flight', () => {
  it('ends on overrides init and counts the knock-on problems in one line', async () => {
    const src = await prepareImportSource('dds-preflight-ending-');
    started.push(src.source);
    const target = await startEmulator({ data: { connections: [], ...targetReferences() } });
    started.push(target);
    const snapshot = join(src.dir, 'v2.snapshot.jsonl');
    const env = { DDS_SOURCE_TOKEN: src.source.token, DDS_TARGET_TOKEN: target.token };
    expect((await runCli(['export', '--from', src.source.url, '-o', snapshot], { env })).exitCode).toBe(0);

    const run = await runCli(['import', snapshot, '--to', target.url, '--no-progress'], { env });
    expect(run.exitCode).toBe(3);
    const lines = run.stderr.trimEnd().split('\n');
    expect(lines.at(-1)).toBe(
      `error: Pre-flight refused the import into ${target.url.replace(/^http:\/\//, '')}; nothing was sent. ` +
        `72 are secrets to supply with --overrides; a file of variables for every one: dds-migrate overrides init ${snapshot} -o overrides.json`,
    );
    expect(lines.at(-2)).toMatch(
      /^ {2}- and \d+ problems of 3 entries that only follow from the above \(naming a connection refused above; --verbose lists them\)$/,
    );
    expect(run.stderr).not.toMatch(/is neither in the target nor created by this import/);
    expect(target.store.connections).toHaveLength(0);

    const verbose = await runCli(['import', snapshot, '--to', target.url, '--no-progress', '--verbose'], {
      env,
    });
    expect(verbose.exitCode).toBe(3);
    expect(verbose.stderr).toMatch(/dataSourceList\/0: connection '.+' is neither in the target nor created/);
    expect(verbose.stderr).not.toMatch(/only follow from the above/);

    // The command it names runs as printed.
    const skeleton = join(src.dir, 'skeleton.json');
    const init = await runCli(['overrides', 'init', snapshot, '-o', skeleton], { env });
    expect(init.exitCode, init.stderr).toBe(0);
  }, 60_000);
});
