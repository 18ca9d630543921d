/**
 * The journal's lock, `<journal>.lock`: pid, hostname and start time, hard-linked into place (so it
 * appears whole). A second run is refused while the holder lives; a dead process's lock on this host is
 * taken over at once. Why not a lock library: docs/why.md, "Why the journal's lock is a pid lock ...".
 */
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { UsageError } from '../../errors.js';
import { guardFileWrite } from '../../files.js';

interface LockInfo {
  readonly pid: number;
  readonly hostname: string;
  readonly startedAt: string;
}

/** Locks this process holds now, so that a lock with our own pid can be told from a dead namesake's. */
const heldLocks = new Set<string>();

/** Record `lockPath` as held by this process; the returned function releases it. */
function holdLock(lockPath: string): () => Promise<void> {
  heldLocks.add(lockPath);
  return async () => {
    heldLocks.delete(lockPath);
    await unlink(lockPath).catch(() => undefined);
  };
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to someone else, so it is alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Replaces a dead process's lock with ours, never removing a live one. Two runs may judge the same lock
 * stale at once, so this happens under a second lock, `<lock>.takeover` (linked, like the lock): only its
 * holder re-reads the lock, deletes it if still the dead holder's, and links its own. False sends the
 * caller round again (to find the new holder alive and refuse).
 */
async function takeOverStaleLock(lockPath: string, ownLockFile: string, dead: LockInfo): Promise<boolean> {
  const mutex = `${lockPath}.takeover`;
  try {
    await link(ownLockFile, mutex);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another run is taking over. A dead one's takeover lock is removed: a crash here must not block
    // every later run.
    const other = await readLockInfo(mutex);
    if (other && other.pid !== process.pid && !isProcessAlive(other.pid)) {
      await unlink(mutex).catch(() => undefined);
    }
    return false;
  }
  try {
    const current = await readLockInfo(lockPath);
    if (current && (current.pid !== dead.pid || current.startedAt !== dead.startedAt)) {
      return false; // someone took it legitimately meanwhile
    }
    // Never one this process holds (judged stale while another opener here was taking it over).
    if (current?.pid === process.pid && heldLocks.has(lockPath)) return false;
    await unlink(lockPath).catch(() => undefined);
    try {
      await link(ownLockFile, lockPath);
      // Held from now, not once the takeover lock is released: another opener in this process reading
      // our pid meanwhile would judge it a dead namesake's and take it over too (the stale-lock race test).
      heldLocks.add(lockPath);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw error;
    }
  } finally {
    await unlink(mutex).catch(() => undefined);
  }
}

/** The lock's content: null when there is no lock, undefined when it cannot be read. */
async function readLockInfo(path: string): Promise<LockInfo | null | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as LockInfo;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? null : undefined;
  }
}

/** Takes the lock (link fails with EEXIST while another run holds it). */
async function acquireLock(lockPath: string): Promise<() => Promise<void>> {
  const info: LockInfo = { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString() };
  const tmp = `${lockPath}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    await writeFile(tmp, `${JSON.stringify(info)}\n`, { mode: 0o600 });
    for (let tries = 0; tries < 3; tries++) {
      try {
        await link(tmp, lockPath);
        return holdLock(lockPath);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = await readLockInfo(lockPath);
      if (holder === null) continue; // released meanwhile
      // Our own pid in a lock this process does not hold is a previous process that had the same pid
      // (PID 1 in a container is the usual case): dead, whatever kill(pid, 0) says.
      const dead =
        holder?.hostname === hostname() &&
        (holder.pid === process.pid ? !heldLocks.has(lockPath) : !isProcessAlive(holder.pid));
      if (!dead) {
        const who = holder
          ? `process ${holder.pid} on ${holder.hostname} since ${holder.startedAt}`
          : 'another run';
        throw new UsageError(`Another import is using this journal (${who}; lock ${lockPath})`, {
          hint: 'Wait for it to finish; if no such run exists any more, delete the lock file and re-run',
        });
      }
      if (await takeOverStaleLock(lockPath, tmp, holder)) return holdLock(lockPath);
    }
    throw new UsageError(`Could not take the journal lock ${lockPath}`, { hint: 'Re-run the command' });
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}

/** Takes `<path>.lock` for `openJournal` (every import and undo); resolves to the release. */
export function lockJournal(path: string): Promise<() => Promise<void>> {
  return guardFileWrite(path, 'journal', () => acquireLock(`${path}.lock`));
}
