/**
 * The data generator (`node dist/bench/gen-data.js`): `--help` prints its usage (it used to crash
 * with a stack trace, reading "--help" as COUNT), a bad argument is one line and exit 2.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runGenData } from '../../bench/gen-data.js';
import { makeTempDir } from '../helpers/temp-dir.js';

async function run(argv: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  err.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const code = await runGenData(argv, out, err);
  return { code, stdout, stderr };
}

describe('gen-data', () => {
  it('--help and -h print the usage, pointing at dds-migrate emulator --generate', async () => {
    for (const flag of ['--help', '-h']) {
      const result = await run([flag]);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^Usage: node dist\/bench\/gen-data\.js /);
      expect(result.stdout).toContain('dds-migrate emulator --generate N');
      expect(result.stderr).toBe('');
    }
  });

  it('a bad argument: one error line, exit 2, no stack', async () => {
    for (const argv of [['--bogus'], ['ten'], ['5', '--seed', 'x'], ['5', '-o']]) {
      const result = await run(argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(/^error: .*See --help\n$/);
    }
  });

  it('writes COUNT connections to -o FILE', async () => {
    const dir = await makeTempDir('dds-gen-data-');
    const file = join(dir, 'seed.json');
    const result = await run(['3', '--seed', '7', '-o', file]);
    expect(result.code).toBe(0);
    const seed = JSON.parse(await readFile(file, 'utf8')) as { connections: unknown[] };
    expect(seed.connections).toHaveLength(3);
  });
});
