/**
 * Temporary folders for tests, removed without each test having to remember: `makeTempDir(prefix)`
 * creates `<os tmpdir>/<prefix>XXXXXX` and registers it; `test/helpers/setup.ts` removes every
 * registered folder once the test file ends (pass or fail), so a run leaves `/tmp` as it found it.
 */
import { mkdtempSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Per test file: vitest evaluates this module afresh in each file's worker.
const created = new Set<string>();

/** Create a temporary folder named `<prefix>XXXXXX` under the OS temp folder, removed when the file ends. */
export async function makeTempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  created.add(dir);
  return dir;
}

/** {@link makeTempDir} for synchronous set-up code. */
export function makeTempDirSync(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  created.add(dir);
  return dir;
}

/**
 * Remove every folder made by {@link makeTempDir} so far (setup.ts calls it after each file; a test may
 * call it earlier). Removes all of them even when one removal fails, then reports the failures.
 */
export async function removeTempDirs(): Promise<void> {
  const dirs = [...created];
  created.clear();
  const results = await Promise.allSettled(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  const failed = results.flatMap((r, i) =>
    r.status === 'rejected' ? [`${dirs[i]}: ${String(r.reason)}`] : [],
  );
  if (failed.length > 0) throw new Error(`could not remove temporary folders:\n${failed.join('\n')}`);
}
