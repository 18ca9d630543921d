/**
 * The built CLI (`dist/src/cli/main.js`), for the tests that must run it as a child process. They test
 * whatever `dist/` holds, so before using it they check it exists and is not older than the sources:
 * a stale build would test yesterday's code and pass or fail for reasons nobody can see.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { chmod, cp, lstat, mkdtemp, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
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

/**
 * A copy of the built CLI that any user can read and run: `dist/src`, `package.json`, `schemas/` and the
 * production dependencies (the closure of `dependencies`, 18 MB; dev tools are not needed), in a new
 * folder of mode 0755 under the system's temporary folder. A test that runs the CLI as another user
 * needs it: the working copy may live in a folder only its owner can enter (a clone in `mktemp -d`,
 * 0700), where that user cannot even reach `dist/src/cli/main.js`. Returns the copy's folder (the
 * caller removes it) and its `main.js`.
 */
export async function copyBuiltCliForAnyUser(): Promise<{ readonly dir: string; readonly main: string }> {
  const root = packageRoot();
  const copy = await mkdtemp(join(tmpdir(), 'dds-migrate-cli-'));
  const take = (path: string) => cp(join(root, path), join(copy, path), { recursive: true });
  await Promise.all([take('package.json'), take('schemas'), take(join('dist', 'src'))]);
  const pending = Object.keys(readPackage(root).dependencies ?? {});
  const copied = new Set<string>();
  while (pending.length > 0) {
    const name = pending.pop() as string;
    if (copied.has(name)) continue;
    const dir = join(root, 'node_modules', name);
    // Not hoisted: it is inside the folder of the package that needs it, copied whole.
    if (!existsSync(dir)) continue;
    copied.add(name);
    await take(join('node_modules', name));
    for (const manifest of packagesUnder(dir))
      pending.push(...Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies }));
  }
  await openUp(copy);
  return { dir: copy, main: join(copy, 'dist', 'src', 'cli', 'main.js') };
}

/** The manifest of the package in `dir` and of every package nested in its `node_modules`. */
function packagesUnder(dir: string): ReturnType<typeof readPackage>[] {
  const out = [readPackage(dir)];
  const nested = join(dir, 'node_modules');
  if (!existsSync(nested)) return out;
  for (const entry of readdirSync(nested)) {
    if (entry.startsWith('.')) continue;
    const names = entry.startsWith('@')
      ? readdirSync(join(nested, entry)).map((n) => join(entry, n))
      : [entry];
    for (const name of names)
      if (existsSync(join(nested, name, 'package.json'))) out.push(...packagesUnder(join(nested, name)));
  }
  return out;
}

function readPackage(dir: string): {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
} {
  return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
}

/** Folders 0755 and files readable by all (0644, or 0755 when executable), all the way down. */
async function openUp(path: string): Promise<void> {
  const info = await lstat(path);
  if (info.isSymbolicLink()) return;
  if (info.isDirectory()) {
    await chmod(path, 0o755);
    for (const entry of await readdir(path)) await openUp(join(path, entry));
  } else {
    await chmod(path, info.mode & 0o111 ? 0o755 : 0o644);
  }
}
