/**
 * `cases list -o FILE`: written to a temporary file next to FILE and renamed over it at the end, so a
 * failed or interrupted run leaves no half file (and an older FILE untouched).
 */
import { randomBytes } from 'node:crypto';
import { type FileHandle, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { UsageError } from '../errors.js';

const CHUNK_SIZE = 64 * 1024;

/** A text file being written; invisible under its name until {@link AtomicTextFile.commit}. */
export interface AtomicTextFile {
  readonly path: string;
  write(text: string): void;
  /** True when enough text is buffered: await {@link AtomicTextFile.drain} to write it out. */
  readonly needsDrain: boolean;
  drain(): Promise<void>;
  /** Flush, fsync, rename over `path`. */
  commit(): Promise<void>;
  /** Remove the temporary file (after a failure). Safe to call twice. */
  abort(): Promise<void>;
}

/**
 * Open `path` for an atomic write. Mode 0600: security cases say where sensitive data lives, which is
 * itself sensitive; `chmod` it when it is meant to be shared. A folder that does not exist or cannot be
 * written is a usage error (exit 2) raised before anything is fetched.
 */
export async function openAtomicTextFile(path: string, mode = 0o600): Promise<AtomicTextFile> {
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let handle: FileHandle;
  try {
    handle = await open(tmp, 'wx', mode);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'error';
    throw new UsageError(`Cannot write ${path} (${code})`, {
      hint: 'Check the -o path and that its folder exists',
      cause,
    });
  }
  // Text is gathered in memory and written in chunks of about 64 KiB by `drain` (the caller awaits it
  // after each record), so memory stays bounded without a stream in between.
  const chunks: string[] = [];
  let buffered = 0;
  let done = false;

  const flush = async () => {
    if (chunks.length === 0) return;
    const text = chunks.join('');
    chunks.length = 0;
    buffered = 0;
    await handle.writeFile(text, 'utf8');
  };

  const abort = async () => {
    if (done) return;
    done = true;
    chunks.length = 0;
    await handle.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
  };

  return {
    path,
    write(text) {
      chunks.push(text);
      buffered += text.length;
    },
    get needsDrain() {
      return buffered >= CHUNK_SIZE;
    },
    drain: flush,
    async commit() {
      try {
        await flush();
        await handle.sync();
        await handle.close();
        await rename(tmp, path);
        done = true;
      } catch (error) {
        await abort();
        throw error;
      }
    },
    abort,
  };
}
