import { link, open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError } from '../errors.js';
import { PRIVATE_FILE_MODE } from '../files.js';

const MAX_NAME_SUFFIX = 1000;

/**
 * Give a finished `--out-dir` snapshot its timestamped name (`-2`, `-3`, ... when taken), never replacing
 * one: `link` fails when the name exists; without hard links an exclusive open reserves it.
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
