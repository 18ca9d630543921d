/**
 * The built CLI (`dist/src/cli/main.js`), for the tests that must run it as a child process. They test
 * whatever `dist/` holds, so before using it they check it exists and is not older than the sources:
 * a stale build would test yesterday's code and pass or fail for reasons nobody can see.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { packageRoot } from '../../src/paths.js';

/** Path of the built CLI entry point. */
export const BUILT_CLI = join(packageRoot(), 'dist', 'src', 'cli', 'main.js');

/**
 * Throw, with what to do, when `dist/src` is missing or a source under `src/` changed after its
 * compiled file was written (`npm test` builds first; `npx vitest run` alone does not).
 */
export function assertBuiltCliFresh(): void {
  const root = packageRoot();
  const build = 'run `npm run build` first (`npm test` does)';
  if (!existsSync(BUILT_CLI)) throw new Error(`${relative(root, BUILT_CLI)} is missing: ${build}`);
  const stale: string[] = [];
  for (const source of listTypeScript(join(root, 'src'))) {
    const built = join(root, 'dist', relative(root, source)).replace(/\.ts$/, '.js');
    if (!existsSync(built)) stale.push(`${relative(root, built)} is missing`);
    // tsc rewrites every output on each build, so an output older than its source was not rebuilt.
    else if (statSync(built).mtimeMs < statSync(source).mtimeMs)
      stale.push(`${relative(root, source)} changed after ${relative(root, built)} was built`);
  }
  if (stale.length > 0) {
    const shown = stale.slice(0, 3).join('; ');
    const more = stale.length > 3 ? ` (and ${stale.length - 3} more)` : '';
    throw new Error(`dist/ is stale: ${shown}${more}. The child-process tests run the built CLI: ${build}`);
  }
}

/** Every `.ts` file (not `.d.ts`) under `dir`. */
function listTypeScript(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listTypeScript(path));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}
