/**
 * Reading and writing the files users hand in and get back, the same way everywhere: a JSON input file
 * that cannot be read or parsed is one {@link InputFileError} line (exit 2) that never quotes the file's
 * content, and a file written by a command appears complete under its name or not at all (temporary
 * file in the same folder, mode 0600, fsync, rename; no temporary file left behind on failure).
 */
import { randomBytes } from 'node:crypto';
import { type FileHandle, lstat, open, readdir, readFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { FileWriteError, InputFileError, UsageError } from './errors.js';
import { describeJsonError } from './secrets.js';

/** Mode of files that may hold credentials or say where sensitive data lives. */
export const PRIVATE_FILE_MODE = 0o600;

export interface ReadJsonFileOptions {
  /** What the file is, for messages: `cannot read the <what> (EACCES)`. Default `file`. */
  readonly what?: string;
  /** The path as the user typed it, shown in messages instead of the resolved `path`. */
  readonly label?: string;
  /** Hint when the file is missing or cannot be read, e.g. `Check the --file path`. */
  readonly readHint?: string;
  /** Hint when the file is not JSON. */
  readonly jsonHint?: string;
}

/**
 * Read a text file (UTF-8). A missing file (`<label>: no such file`) or an unreadable one (`<label>:
 * cannot read the <what> (CODE)`) is an {@link InputFileError} (exit 2) with `readHint`.
 */
export async function readTextFile(
  path: string,
  options: Pick<ReadJsonFileOptions, 'what' | 'label' | 'readHint'> = {},
): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    throw new InputFileError(
      options.label ?? path,
      undefined,
      code === 'ENOENT' ? 'no such file' : `cannot read the ${options.what ?? 'file'} (${code ?? 'error'})`,
      { ...(options.readHint === undefined ? {} : { hint: options.readHint }), cause },
    );
  }
}

/**
 * Read and parse a JSON file. A missing file (`<label>: no such file`), an unreadable one
 * (`<label>: cannot read the <what> (CODE)`) and one that is not JSON (`<label>: is not valid JSON
 * (...)`, without V8's excerpt of the content, which could be a credential) are {@link InputFileError}s
 * (exit 2). The value is not checked: that is the caller's schema.
 */
export async function readJsonFile(path: string, options: ReadJsonFileOptions = {}): Promise<unknown> {
  const label = options.label ?? path;
  const text = await readTextFile(path, options);
  try {
    return JSON.parse(text) as unknown;
  } catch (cause) {
    throw new InputFileError(label, undefined, `is not valid JSON (${describeJsonError(cause)})`, {
      ...(options.jsonHint === undefined ? {} : { hint: options.jsonHint }),
      cause,
    });
  }
}

/**
 * A unique temporary path next to `path` (same folder, so the final rename is atomic), hidden:
 * `.<name>.<pid>-<random>.<ext>`.
 */
export function tempPathFor(path: string, ext = 'tmp'): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}-${randomBytes(4).toString('hex')}.${ext}`);
}

/** A temporary file untouched for this long is stale even if a process with its pid is alive (pid reuse). */
export const STALE_TEMP_AGE_MS = 24 * 60 * 60 * 1000;

/** Temporary files this process is writing now (a pid-1 container reuses the pid of a killed run). */
const liveTempFiles = new Set<string>();

/** Whether a process with this pid exists on this host (EPERM: it exists, it is someone else's). */
function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Remove temporary files of `path` ({@link tempPathFor}'s `.<name>.<pid>-<hex>.<ext>` in its folder)
 * that a killed run left behind: those whose writer's pid no longer runs on this host, or that nobody
 * has modified for {@link STALE_TEMP_AGE_MS}. A live writer's files are kept: its pid is alive and it
 * keeps them fresh. Only names of that exact pattern for this `path` are touched. Best effort; returns
 * the names removed. Assumes the folder is local (pids of another host mean nothing here).
 */
export async function removeStaleTempFiles(
  path: string,
  exts: readonly string[] = ['tmp'],
  now = Date.now(),
): Promise<string[]> {
  const dir = dirname(path);
  const prefix = `.${basename(path)}.`;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const m = /^(\d+)-[0-9a-f]{8}\.([a-z]+)$/.exec(name.slice(prefix.length));
    if (m === null || !exts.includes(m[2] as string)) continue;
    const file = join(dir, name);
    if (liveTempFiles.has(file)) continue;
    const pid = Number(m[1]);
    const info = await lstat(file).catch(() => undefined);
    if (info === undefined || !info.isFile()) continue;
    const dead = pid === process.pid || !isPidAlive(pid);
    if (!dead && now - info.mtimeMs < STALE_TEMP_AGE_MS) continue;
    try {
      await unlink(file);
      removed.push(name);
    } catch {
      // Gone meanwhile, or not ours to remove: left alone.
    }
  }
  return removed;
}

/** Mark `file` as being written by this process (so {@link removeStaleTempFiles} keeps it); returns the unmark. */
export function holdTempFile(file: string): () => void {
  liveTempFiles.add(file);
  return () => {
    liveTempFiles.delete(file);
  };
}

/** Make a rename in `dir` durable. Not every platform can open a folder for fsync; that is not an error. */
export async function syncFolder(dir: string): Promise<void> {
  try {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    // Best effort: the data itself was fsync'd before the rename.
  }
}

/**
 * True for an error of the operating system about a file (it has an errno `code` such as ENOSPC,
 * EACCES, EROFS, EISDIR, EIO, and the `syscall` that failed): the machine's state, not a bug.
 */
export function isFileSystemError(error: unknown): error is NodeJS.ErrnoException {
  if (!(error instanceof Error)) return false;
  const e = error as NodeJS.ErrnoException;
  return typeof e.code === 'string' && typeof e.syscall === 'string' && !NETWORK_CODES.has(e.code);
}

/** Errno codes of sockets (they also carry a `syscall`): never a file's failure. */
const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);

/** What to do about a failed write, by its errno code. */
function describeWriteFix(code: string): string {
  switch (code) {
    case 'ENOSPC':
    case 'EDQUOT':
    case 'EFBIG':
      return 'Free disk space, then re-run';
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return 'Check the permissions of the file and its folder, or choose another path';
    case 'EISDIR':
      return 'The path names a folder: name a file';
    default:
      return 'Check the disk and the path, then re-run';
  }
}

/**
 * The one wrapper of local writes: a file-system error (see {@link isFileSystemError}) raised while
 * writing `file` becomes one {@link FileWriteError} line (exit 2), e.g. `out.csv: cannot write the
 * report (ENOSPC). Free disk space, then re-run`; anything else (a bug, a typed error) passes through.
 * `what` names the file's role (`journal`, `report`, `log file`); `hint` replaces the default advice.
 */
export function toFileWriteError(error: unknown, file: string, what: string, hint?: string): unknown {
  if (!isFileSystemError(error)) return error;
  const code = error.code ?? 'error';
  return new FileWriteError(file, `cannot write the ${what} (${code})`, {
    hint: hint ?? describeWriteFix(code),
    cause: error,
  });
}

/** Run `action`, which writes `file`, converting a file-system error with {@link toFileWriteError}. */
export async function guardFileWrite<T>(
  file: string,
  what: string,
  action: () => Promise<T>,
  hint?: string,
): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw toFileWriteError(error, file, what, hint);
  }
}

/**
 * Check, before anything is sent, that a command will be able to write `path` at the end: it is not a
 * folder, and its folder exists and lets us create a file there (a temporary file is created and
 * removed at once). A problem is a {@link UsageError} (exit 2) naming `flag`, e.g. `--report`. It does
 * not reserve space: a disk that fills up later is still a {@link FileWriteError} then.
 */
export async function checkWritableOutput(path: string, flag: string): Promise<void> {
  const existing = await stat(path).catch(() => undefined);
  if (existing?.isDirectory()) {
    throw new UsageError(`Cannot write ${path}: it is a folder`, { hint: `Name a file for ${flag}` });
  }
  const { tmp, handle } = await openTemp(path, {
    hint: `Check ${flag}: its folder must exist and be writable`,
  });
  await discardTemp(handle, tmp);
}

/** {@link checkWritableOutput} for each output given (`path` undefined: the option is absent). */
export async function checkWritableOutputs(
  outputs: readonly { readonly path: string | undefined; readonly flag: string }[],
): Promise<void> {
  for (const { path, flag } of outputs) if (path !== undefined) await checkWritableOutput(path, flag);
}

export interface AtomicWriteOptions {
  /** File mode (default {@link PRIVATE_FILE_MODE}, 0600), stated with chmod whatever the umask. */
  readonly mode?: number;
  /** Hint of the usage error raised when the file cannot be created, e.g. `Check the -o path`. */
  readonly hint?: string;
  /** The file's role in messages about a failed write (`cannot write the <what>`); default `output file`. */
  readonly what?: string;
}

const DEFAULT_CREATE_HINT = 'Check the path and that its folder exists';

/** Create the temporary file of `path`; a folder that is missing or not writable is a usage error (exit 2). */
async function openTemp(
  path: string,
  options: AtomicWriteOptions,
): Promise<{ readonly tmp: string; readonly handle: FileHandle }> {
  const mode = options.mode ?? PRIVATE_FILE_MODE;
  const tmp = tempPathFor(path);
  let handle: FileHandle;
  try {
    handle = await open(tmp, 'wx', mode);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'error';
    throw new UsageError(`Cannot write ${path} (${code})`, {
      hint: options.hint ?? DEFAULT_CREATE_HINT,
      cause,
    });
  }
  try {
    // The mode of open() is narrowed by the umask; chmod states it.
    await handle.chmod(mode);
  } catch (error) {
    await discardTemp(handle, tmp);
    throw error;
  }
  return { tmp, handle };
}

/** fsync, close, rename over `path`, fsync the folder. */
async function commitTemp(handle: FileHandle, tmp: string, path: string): Promise<void> {
  await handle.sync();
  await handle.close();
  await rename(tmp, path);
  await syncFolder(dirname(path));
}

/** Close and remove the temporary file after a failure; never throws. */
async function discardTemp(handle: FileHandle, tmp: string): Promise<void> {
  await handle.close().catch(() => undefined);
  await unlink(tmp).catch(() => undefined);
}

/**
 * Write `data` to `path` atomically: a temporary file in the same folder (mode 0600 unless `mode`),
 * fsync, rename over `path`. On failure the temporary file is removed and an older `path` is untouched.
 * Callers scrub secrets out of `data` themselves when it is a report.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: AtomicWriteOptions = {},
): Promise<void> {
  const { tmp, handle } = await openTemp(path, options);
  try {
    await handle.writeFile(data);
    await commitTemp(handle, tmp, path);
  } catch (error) {
    await discardTemp(handle, tmp);
    throw toFileWriteError(error, path, options.what ?? 'output file');
  }
}

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

const CHUNK_SIZE = 64 * 1024;

/**
 * Open `path` for an atomic write of text produced piece by piece (e.g. `cases list -o FILE`). The
 * temporary file is created now, so a folder that does not exist or cannot be written is a usage error
 * (exit 2) raised before anything is fetched.
 */
export async function openAtomicTextFile(
  path: string,
  options: AtomicWriteOptions = {},
): Promise<AtomicTextFile> {
  const { tmp, handle } = await openTemp(path, options);
  // Text is gathered in memory; every 64 KiB of it becomes a Buffer (outside the JS heap: a page of
  // text joined into one large string would be allocated in the old generation and cost full GCs),
  // written out by `drain` (the caller awaits it after a record or a page), so memory stays bounded
  // without a stream in between.
  const chunks: string[] = [];
  let buffered = 0;
  const ready: Buffer[] = [];
  let done = false;

  const what = options.what ?? 'output file';
  const seal = () => {
    if (chunks.length === 0) return;
    ready.push(Buffer.from(chunks.join(''), 'utf8'));
    chunks.length = 0;
    buffered = 0;
  };
  /** Write the buffers whole, in one writev when the system takes them all (it may stop short, e.g. as a disk fills). */
  const writeReady = async () => {
    seal();
    const buffers = ready.splice(0);
    if (buffers.length === 0) return;
    let { bytesWritten } = await handle.writev(buffers);
    for (const buffer of buffers) {
      if (bytesWritten >= buffer.length) {
        bytesWritten -= buffer.length;
        continue;
      }
      await handle.writeFile(buffer.subarray(bytesWritten));
      bytesWritten = 0;
    }
  };
  const abort = async () => {
    if (done) return;
    done = true;
    chunks.length = 0;
    ready.length = 0;
    await discardTemp(handle, tmp);
  };
  // A failed write removes the temporary file: a half-written output never appears under its name.
  const settle = async (write: () => Promise<void>) => {
    try {
      await write();
    } catch (error) {
      await abort();
      throw toFileWriteError(error, path, what);
    }
  };

  return {
    path,
    write(text) {
      chunks.push(text);
      buffered += text.length;
      if (buffered >= CHUNK_SIZE) seal();
    },
    get needsDrain() {
      return ready.length > 0;
    },
    drain: () => settle(writeReady),
    async commit() {
      await settle(async () => {
        await writeReady();
        await commitTemp(handle, tmp, path);
      });
      done = true;
    },
    abort,
  };
}
