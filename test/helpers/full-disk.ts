/**
 * A full disk for tests, and a user who is not root: what the local-file hardening tests need.
 *
 * - {@link mountFullDisk} mounts a small tmpfs on a new temporary folder and fills it, so that creating a
 *   file still works (inodes are left) but writing a byte fails with ENOSPC. It needs root and a sandbox
 *   that allows `mount`; where it cannot, it returns the reason, for `describe.skipIf` / `it.skipIf`.
 * - {@link NON_ROOT} runs a command as `nobody` with `setpriv` (root only), or says why it cannot.
 *
 * Both are decided once, synchronously, when a test file loads.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A mounted, filled tmpfs. */
export interface FullDisk {
  /** The mount point: a folder where files can be created but not written. */
  readonly dir: string;
  /** Make `bytes` of room (remove the filler, write a smaller one); for tests that fill it mid-write. */
  leaveRoom(bytes: number): void;
  /** Unmount and remove the folder. */
  unmount(): void;
}

const SIZE_BYTES = 1024 * 1024;

/** Write `path` until the disk refuses (ENOSPC), leaving `room` bytes free first when asked. */
function fill(path: string, limit: number): void {
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(4096, 0x78);
  let written = 0;
  try {
    while (written < limit) written += writeSync(fd, chunk, 0, Math.min(chunk.length, limit - written));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

/** Names of our mount points: `dds-full-<pid of the test process>-XXXXXX`. */
const MOUNT_PREFIX = 'dds-full-';

/**
 * Unmount what test processes that died without their afterAll (a crashed worker, killed by a
 * signal) left behind: our mount points whose pid no longer runs. A live test file's mount is kept.
 */
function sweepStaleMounts(): void {
  let mounts: string;
  try {
    mounts = readFileSync('/proc/mounts', 'utf8');
  } catch {
    return;
  }
  const base = join(tmpdir(), MOUNT_PREFIX);
  for (const line of mounts.split('\n')) {
    const point = line.split(' ')[1];
    if (point === undefined || !point.startsWith(base)) continue;
    const pid = Number(point.slice(base.length).split('-')[0]);
    if (!Number.isInteger(pid) || pid <= 0 || isAlive(pid)) continue;
    try {
      execFileSync('umount', [point], { stdio: 'ignore' });
      rmSync(point, { recursive: true, force: true });
    } catch {
      // Someone else's business after all.
    }
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Mount and fill a 1 MiB tmpfs; a string says why that is not possible here. */
export function mountFullDisk(): FullDisk | string {
  if (process.getuid?.() !== 0) return 'mounting a full tmpfs needs root';
  sweepStaleMounts();
  const dir = mkdtempSync(join(tmpdir(), `${MOUNT_PREFIX}${process.pid}-`));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${SIZE_BYTES},mode=0777`, 'tmpfs', dir], {
      stdio: 'ignore',
    });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return 'this sandbox does not allow mount -t tmpfs';
  }
  const filler = join(dir, '.filler');
  let mounted = true;
  const unmount = (): void => {
    if (!mounted) return;
    mounted = false;
    process.removeListener('exit', unmount);
    // A process a test started may still hold a file there for a moment (umount: busy): try again,
    // then detach it lazily (freed once the last file is closed) so the folder can go.
    for (let attempt = 0; ; attempt += 1) {
      try {
        execFileSync('umount', attempt < 20 ? [dir] : ['-l', dir], { stdio: 'ignore' });
        break;
      } catch (error) {
        if (attempt >= 20) throw error;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  // Also when the test file's worker ends without its afterAll (a crash): no mount is left behind.
  process.once('exit', unmount);
  fill(filler, Number.POSITIVE_INFINITY);
  return {
    dir,
    leaveRoom(bytes) {
      rmSync(filler, { force: true });
      fill(filler, SIZE_BYTES - bytes);
    },
    unmount,
  };
}

/** uid/gid of `nobody`, and how to run a command as that user; or why not. */
export const NON_ROOT: { readonly uid: number; readonly gid: number; readonly prefix: string[] } | string =
  findNonRoot();

function findNonRoot(): { uid: number; gid: number; prefix: string[] } | string {
  if (process.getuid?.() !== 0) return 'running as another user needs root (the tests run as a user already)';
  const uid = 65534;
  const gid = 65534;
  const prefix = ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--'];
  try {
    const out = execFileSync(prefix[0] as string, [...prefix.slice(1), 'id', '-u'], { encoding: 'utf8' });
    if (out.trim() !== String(uid)) return 'setpriv did not switch to nobody';
  } catch {
    return 'setpriv is not available or not allowed here';
  }
  return { uid, gid, prefix };
}
