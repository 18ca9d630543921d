/**
 * What `npm pack` puts in the package: what a user runs (the built CLI, the schemas, the shipped
 * environments the emulator serves by name), the LICENSE, and nothing else: no test goldens and no
 * source maps whose sources are not shipped. Asks npm for the list (`--dry-run`: nothing is written and
 * nothing is fetched).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/paths.js';
import { assertBuiltCliFresh } from '../helpers/built-cli.js';

const root = packageRoot();
let files: string[] = [];

beforeAll(() => {
  assertBuiltCliFresh();
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const [packed] = JSON.parse(out) as Array<{ files: Array<{ path: string }> }>;
  files = (packed?.files ?? []).map((file) => file.path).sort();
}, 60_000);

describe('npm pack', () => {
  it('holds the built CLI named by bin, the schemas, the LICENSE and the shipped environments', () => {
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
      private?: boolean;
      license: string;
    };
    expect(pkg.private).toBeUndefined();
    expect(pkg.license).toBe('MIT');
    for (const bin of Object.values(pkg.bin)) expect(files).toContain(bin);
    expect(files).toContain('LICENSE');
    expect(files).toContain('dist/src/cli/help-pages.json');
    expect(files).toContain('schemas/connection.schema.json');
    expect(files).toContain('fixtures/environments/prod.json');
    expect(files.filter((f) => f.startsWith('schemas/templates/')).length).toBeGreaterThan(0);
  });

  it('holds no test goldens, tests, benchmarks or sources', () => {
    const foreign = files.filter(
      (f) =>
        (f.startsWith('fixtures/') && !f.startsWith('fixtures/environments/')) ||
        f.startsWith('test/') ||
        f.startsWith('dist/test/') ||
        f.startsWith('dist/bench/') ||
        f.startsWith('src/'),
    );
    expect(foreign).toEqual([]);
  });

  it('holds no source map (their sources are not shipped)', () => {
    expect(files.filter((f) => f.endsWith('.map'))).toEqual([]);
  });
});
