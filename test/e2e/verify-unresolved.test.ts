// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:SG}" is a literal overrides placeholder
/**
 * `verify --overrides` with a placeholder it cannot resolve on a non-secret field: one clear error
 * naming what to set (exit 2), as the import refuses it, not every connection reported different with
 * the placeholder as its value (against the emulator on 127.0.0.1, real HTTP).
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
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

describe('verify --overrides with an unresolved placeholder', () => {
  it('is one error naming the variable (exit 2); resolved, the value is compared', async () => {
    emu = await startEmulator({ data: join(fixturesDir(), 'environments', 'prod.json') });
    const env = { DDS_TOKEN: emu.token, DDS_SOURCE_TOKEN: emu.token };
    const dir = await makeTempDir('verify-unresolved-');
    const snapshot = join(dir, 'prod.snapshot.jsonl');
    expect((await runCli(['export', '--from', emu.url, '-o', snapshot], { env })).exitCode).toBe(0);
    const overrides = join(dir, 'o.json');
    await writeFile(overrides, JSON.stringify({ all: { scanner_group: '${env:SG}' } }));
    const args = ['verify', snapshot, '--env', emu.url, '--overrides', overrides];
    const unset = await runCli(args, { env });
    expect(unset.exitCode, unset.stdout).toBe(2);
    const lines = unset.stderr.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /--overrides sets \/scanner_group of .* to \$\{env:SG\}, which is not resolved.*set the environment variable SG/,
    );
    const set = await runCli(args, { env: { ...env, SG: 'eu-scanners' } });
    expect(set.exitCode).toBe(1);
    expect(set.stdout).toMatch(/scanner_group/);
    expect(set.stdout).not.toMatch(/\$\{env:SG\}/);
  });
});
