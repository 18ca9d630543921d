/**
 * Placing a finished `--out-dir` snapshot (written and synced under a temporary name in the target's
 * folder) under its final name, never replacing an existing snapshot (`-o FILE` is a rename: write.ts).
 */
import { link, open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { PRIVATE_FILE_MODE } from '../files.js';

const MAX_NAME_SUFFIX = 1000;

/**
 * `--out-dir`: give the file its timestamped name without ever replacing one. `link` fails when the
 * name exists, which makes it an exclusive create of a complete file; where hard links are not
 * supported, the name is reserved with an exclusive open and the file renamed over the reservation.
 */
export async function linkExclusive(tmpPath: string, dir: string, stamp: string): Promise<string> {
  for (let n = 1; n <= MAX_NAME_SUFFIX; n++) {
    const path = join(dir, `${stamp}${n === 1 ? '' : `-${n}`}.snapshot.jsonl`);
    try {
      await link(tmpPath, path);
      await unlink(tmpPath);
      return path;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') continue;
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw error;
    }
    // No hard links on this filesystem: reserve the name exclusively, then rename over it.
    try {
      const reserved = await open(path, 'wx', PRIVATE_FILE_MODE);
      await reserved.close();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    await rename(tmpPath, path);
    return path;
  }
  throw new UsageError(`More than ${MAX_NAME_SUFFIX} snapshots named ${stamp} in ${dir}`, {
    hint: 'Clean up the folder',
  });
}
