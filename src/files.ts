/**
 * A bad input file is one {@link InputFileError} line (exit 2) that never quotes its content (it may hold
 * a credential). An output appears complete or not at all: a 0600 temporary file beside it, fsync, rename.
 */

import { randomBytes } from 'node:crypto';
import { fstatSync, writeSync } from 'node:fs';
import {
  type FileHandle,
  lstat,
  open,
  readdir,
  readFile,
  realpath,
  rename,
  stat,
  unlink,
} from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { FileWriteError, InputFileError, UsageError } from './errors.js';
import { MAX_DOCUMENT_DEPTH, nestsTooDeep } from './json-depth.js';
import { describeJsonError } from './secrets.js';

/** Mode of files that may hold credentials or say where sensitive data lives. */
export const PRIVATE_FILE_MODE = 0o600;

export interface ReadJsonFileOptions {
  /** What the file is: `cannot read the <what> (EACCES)`. Default `file`. */
  readonly what?: string;
  /** The path as the user typed it, for messages. */
  readonly label?: string;
  readonly readHint?: string;
  readonly jsonHint?: string;
}

/** `text` without a leading byte-order mark (some editors on Windows write one before JSON). */
export function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Read a UTF-8 text file, without a byte-order mark; missing or unreadable is an {@link InputFileError}. */
export async function readTextFile(
  path: string,
  options: Pick<ReadJsonFileOptions, 'what' | 'label' | 'readHint'> = {},
): Promise<string> {
  try {
    return withoutBom(await readFile(path, 'utf8'));
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

/** Read and parse a JSON file (the caller checks its schema); failures as {@link readTextFile}. */
export async function readJsonFile(path: string, options: ReadJsonFileOptions = {}): Promise<unknown> {
  const label = options.label ?? path;
  const text = await readTextFile(path, options);
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (cause) {
    throw new InputFileError(label, undefined, `is not valid JSON (${describeJsonError(cause)})`, {
      ...(options.jsonHint === undefined ? {} : { hint: options.jsonHint }),
      cause,
    });
  }
  // A document (a config, an overrides file, a scan profile) wraps its objects a few levels deep.
  if (nestsTooDeep(value, text.length, MAX_DOCUMENT_DEPTH)) {
    throw new InputFileError(label, undefined, `nests more than ${MAX_DOCUMENT_DEPTH} levels deep`, {
      ...(options.jsonHint === undefined ? {} : { hint: options.jsonHint }),
    });
  }
  return value;
}

/** A unique hidden temporary path next to `path` (same folder: the rename is atomic). */
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
 * Remove the temporary files of `path` a killed run left behind (they may hold clear credentials): those
 * whose writer's pid is gone, or untouched for {@link STALE_TEMP_AGE_MS}. Only {@link tempPathFor}'s exact
 * pattern is touched; best effort; assumes a local folder (another host's pids mean nothing here).
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
    } catch {}
  }
  return removed;
}

/** Mark `file` as being written (so {@link removeStaleTempFiles} keeps it); returns the unmark. */
export function holdTempFile(file: string): () => void {
  liveTempFiles.add(file);
  return () => {
    liveTempFiles.delete(file);
  };
}

/** Make a rename in `dir` durable (best effort: not every platform can fsync a folder). */
export async function syncFolder(dir: string): Promise<void> {
  try {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {}
}

/** An operating-system error about a file (ENOSPC, EACCES, EIO...): the machine's state, not a bug. */
function isFileSystemError(error: unknown): error is NodeJS.ErrnoException {
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
 * The one wrapper of local writes: a file-system error writing `file` becomes one {@link FileWriteError} line
 * (exit 2: `out.csv: cannot write the report (ENOSPC). Free disk space, then re-run`), not a bug's exit 70.
 */
export function toFileWriteError(error: unknown, file: string, what: string): unknown {
  if (!isFileSystemError(error)) return error;
  const code = error.code ?? 'error';
  return new FileWriteError(file, `cannot write the ${what} (${code})`, {
    hint: describeWriteFix(code),
    cause: error,
  });
}

/** Run `action`, which writes `file`, converting a file-system error with {@link toFileWriteError}. */
export async function guardFileWrite<T>(file: string, what: string, action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw toFileWriteError(error, file, what);
  }
}

/**
 * Check before anything is sent that `path` can be written at the end (a {@link UsageError} naming
 * `flag`). No space is reserved: a disk that fills later is still a {@link FileWriteError}.
 */
export async function checkWritableOutput(
  path: string,
  flag: string,
  /** Files the command reads (the snapshot): an output must not replace one. */
  inputs: readonly string[] = [],
): Promise<void> {
  const where = async (p: string) => realpath(p).catch(() => resolve(p));
  const output = await where(path);
  for (const input of inputs) {
    if (output === (await where(input))) {
      throw new UsageError(`${flag} ${path} is the file this command reads: writing it would replace it`, {
        hint: `Name another file for ${flag}`,
      });
    }
  }
  const existing = await stat(path).catch(() => undefined);
  if (existing?.isDirectory()) {
    throw new UsageError(`Cannot write ${path}: it is a folder`, { hint: `Name a file for ${flag}` });
  }
  const { tmp, handle } = await openTemp(path, {
    hint: `Check ${flag}: its folder must exist and be writable`,
  });
  await discardTemp(handle, tmp);
}

export async function checkWritableOutputs(
  outputs: readonly { readonly path: string | undefined; readonly flag: string }[],
  inputs: readonly string[] = [],
): Promise<void> {
  for (const { path, flag } of outputs) if (path !== undefined) await checkWritableOutput(path, flag, inputs);
}

export interface AtomicWriteOptions {
  /** Default {@link PRIVATE_FILE_MODE}, whatever the umask. */
  readonly mode?: number;
  /** Hint when the file cannot be created. */
  readonly hint?: string;
  /** `cannot write the <what>`; default `output file`. */
  readonly what?: string;
}

const DEFAULT_CREATE_HINT = 'Check the path and that its folder exists';

/**
 * Refuse (exit 2) a `path` that is there and is not a regular file: an output is renamed over its path,
 * which would put a file in place of a device (`/dev/full`, as root), a pipe or a symbolic link.
 */
export async function refuseNonRegularFile(path: string, hint: string): Promise<void> {
  const found = await lstat(path).catch(() => undefined);
  if (found === undefined || found.isFile()) return;
  const what = found.isDirectory()
    ? 'a folder'
    : found.isSymbolicLink()
      ? 'a symbolic link'
      : 'not a regular file (a device, pipe or socket)';
  throw new UsageError(`Cannot write ${path}: it is ${what}, and an output replaces its path whole`, {
    hint,
  });
}

/** Create the temporary file of `path`; a missing or read-only folder is a usage error. */
async function openTemp(
  path: string,
  options: AtomicWriteOptions,
): Promise<{ readonly tmp: string; readonly handle: FileHandle }> {
  const mode = options.mode ?? PRIVATE_FILE_MODE;
  await refuseNonRegularFile(path, options.hint ?? 'Name a regular file, or a new one');
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

/** Write `data` to `path` atomically; on failure an older `path` is untouched. Callers scrub reports. */
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
  /** True when enough text is buffered: await {@link AtomicTextFile.drain}. */
  readonly needsDrain: boolean;
  drain(): Promise<void>;
  commit(): Promise<void>;
  /** Remove the temporary file; safe to call twice. */
  abort(): Promise<void>;
}

const CHUNK_SIZE = 64 * 1024;

/** Open `path` for an atomic write piece by piece; created now, so a bad folder fails before any fetch. */
export async function openAtomicTextFile(
  path: string,
  options: AtomicWriteOptions = {},
): Promise<AtomicTextFile> {
  const { tmp, handle } = await openTemp(path, options);
  // Every 64 KiB of text becomes a Buffer (outside the JS heap: one large string per page would cost
  // full GCs), written by `drain`, so memory stays bounded without a stream.
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
  // writev may stop short (a disk filling): the rest is written whole.
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

/**
 * Node writes a chunk to a file stdout with one write(2) and drops what a short write (a disk filling up)
 * left: with stdout a file, the rest is written here, so that the disk's refusal (ENOSPC) is reported.
 */
export function writeShortWritesWhole(stdout: typeof process.stdout): void {
  try {
    if (!fstatSync(stdout.fd).isFile()) return;
  } catch {
    return; // closed (`>&-`)
  }
  (stdout as unknown as Writable)._write = (chunk: Buffer, _encoding, done) => {
    try {
      writeAllSync(stdout.fd, chunk);
      done();
    } catch (error) {
      done(error as Error);
    }
  };
}

/** Write every byte of `bytes` to `fd`, continuing short writes (a disk filling up) until one fails. */
export function writeAllSync(fd: number, bytes: Buffer): void {
  for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written);
}
