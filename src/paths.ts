/** The package's shipped files, whether the code runs from `src/` (vitest) or `dist/src/`. */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder holding dds-migrate's package.json. */
export function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'schemas'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error('dds-migrate: cannot find the package root (no schemas/ folder)');
    dir = parent;
  }
}

export function schemasDir(): string {
  return join(packageRoot(), 'schemas');
}

export function fixturesDir(): string {
  return join(packageRoot(), 'fixtures');
}
