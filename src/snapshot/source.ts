/**
 * A snapshot's bytes, in the clear or age-encrypted (told by the first bytes, never the name): every
 * reader goes through {@link openSnapshotSource}. Encrypted files are decrypted as read, a chunk at a
 * time, no plaintext written; an armored file is decoded whole into memory first (`export` writes binary).
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { InputFileError, InterruptedError } from '../errors.js';
import {
  AGE_NONCE_BYTES,
  AgeFileError,
  type AgeKeys,
  AgePayload,
  ageFormatOf,
  ageHeaderEnd,
  decodeArmor,
  unwrapFileKey,
} from './age.js';
import { snapshotKeys } from './keys.js';

/** The bytes of a snapshot file (decrypted when it is encrypted). */
export interface SnapshotSource {
  /** Plaintext bytes. */
  readonly size: number;
  readonly encrypted: boolean;
  /** As `readSync` at `position` into the start of `buffer`. */
  readAt(buffer: Buffer, length: number, position: number): number;
  /** Idempotent. */
  close(): void;
}

/** Bytes looked at to tell an age file. */
const START_BYTES = 4096;
/** Where the age header must end (a few recipients take a few hundred bytes). */
const MAX_HEADER_BYTES = 1024 * 1024;

const KEY_HINT =
  'Give --identity FILE (the key file age-keygen wrote) or set DDS_AGE_IDENTITY to its path; for a passphrase, --passphrase-env VAR';

/** Open a snapshot (an encrypted one with `keys`); one that cannot be opened is an InputFileError. */
export async function openSnapshotSource(
  path: string,
  label: string,
  keys: AgeKeys = snapshotKeys(),
): Promise<SnapshotSource> {
  let opened: number | undefined;
  let kept = false;
  try {
    const fd = openSync(path, 'r');
    opened = fd;
    let file = readerOf(fd, fstatSync(fd).size);
    const start = readSome(file, Math.min(file.size, START_BYTES), 0);
    const format = ageFormatOf(start);
    if (format === undefined) {
      kept = true;
      return plainSource(fd, file.size);
    }
    if (format === 'armored') {
      const raw = Buffer.from(decodeArmor(readFileSync(fd, 'latin1')));
      file = { size: raw.length, read: (b, o, l, p) => raw.copy(b, o, p, Math.min(raw.length, p + l)) };
    }
    // The first bytes read hold a usual header; a longer one is read on, up to MAX_HEADER_BYTES.
    let head = format === 'armored' ? readSome(file, Math.min(file.size, START_BYTES), 0) : start;
    let end = ageHeaderEnd(head);
    while (end < 0 && head.length < Math.min(file.size, MAX_HEADER_BYTES)) {
      head = readSome(file, Math.min(file.size, MAX_HEADER_BYTES, head.length * 4), 0);
      end = ageHeaderEnd(head);
    }
    if (end < 0 || file.size < end + AGE_NONCE_BYTES) {
      throw new InputFileError(label, undefined, 'the encrypted snapshot has no complete age header', {
        hint: 'The file is damaged or cut short: restore it from another copy',
      });
    }
    const fileKey = await unwrapFileKey(head.subarray(0, end), keys);
    const nonce = readSome(file, AGE_NONCE_BYTES, end);
    const payloadStart = end + AGE_NONCE_BYTES;
    const payload = new AgePayload(fileKey, nonce, file.size - payloadStart, (b, o, l, p) =>
      file.read(b, o, l, payloadStart + p),
    );
    // An armored file is in memory by now: its descriptor is closed in `finally`.
    kept = format === 'binary';
    let closed = false;
    return {
      size: payload.size,
      encrypted: true,
      readAt(buffer, length, position) {
        try {
          return payload.readAt(buffer, length, position);
        } catch (error) {
          throw toSourceError(label, error);
        }
      },
      close() {
        if (closed) return;
        closed = true;
        if (format === 'binary') closeSync(fd);
      },
    };
  } catch (error) {
    throw toSourceError(label, error);
  } finally {
    if (!kept && opened !== undefined) closeSync(opened);
  }
}

/** True when the file at `path` begins as an age file (false when it cannot be read). */
export function isEncryptedSnapshot(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    return ageFormatOf(readSome(readerOf(fd, 256), 256, 0)) !== undefined;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function plainSource(fd: number, size: number): SnapshotSource {
  let closed = false;
  return {
    size,
    encrypted: false,
    readAt: (buffer, length, position) => readSync(fd, buffer, 0, length, position),
    close() {
      if (closed) return;
      closed = true;
      closeSync(fd);
    },
  };
}

interface Readable {
  readonly size: number;
  read(buffer: Buffer, offset: number, length: number, position: number): number;
}

function readerOf(fd: number, size: number): Readable {
  return { size, read: (b, o, l, p) => readSync(fd, b, o, l, p) };
}

function readSome(from: Readable, length: number, position: number): Buffer {
  const buffer = Buffer.alloc(length);
  let got = 0;
  while (got < length) {
    const n = from.read(buffer, got, length - got, position + got);
    if (n === 0) break;
    got += n;
  }
  return got === length ? buffer : buffer.subarray(0, got);
}

function toSourceError(label: string, error: unknown): unknown {
  if (!(error instanceof AgeFileError)) return toReadError(label, error);
  const [message, hint] = AGE_FAILURES[error.reason] ?? [
    `the encrypted snapshot ${error.message}`,
    DAMAGED_HINT,
  ];
  return new InputFileError(label, undefined, message, { hint });
}

const DAMAGED_HINT = 'Restore it from another copy, or export it again';

const AGE_FAILURES: Partial<Record<AgeFileError['reason'], readonly [string, string]>> = {
  'no-key': ['the snapshot is encrypted (age) and no identity was given', KEY_HINT],
  'needs-passphrase': [
    'the snapshot is encrypted with a passphrase (age) and none was given',
    'Give --passphrase-env VAR, VAR holding the passphrase',
  ],
  'no-match': [
    'cannot decrypt the snapshot: none of the identities given opens it',
    'Give the identity of a recipient it was encrypted to (--identity FILE or DDS_AGE_IDENTITY)',
  ],
  'wrong-passphrase': [
    'cannot decrypt the snapshot: the passphrase given does not open it',
    'Check the passphrase in the variable --passphrase-env names',
  ],
};

export const NOT_A_SNAPSHOT_HINT = 'Give a file written by `dds-migrate export`';

/** A failure to read the file as the InputFileError that names it; other errors as they are. */
export function toReadError(path: string, error: unknown): unknown {
  if (error instanceof InputFileError || error instanceof InterruptedError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT')
    return new InputFileError(path, undefined, 'no such file', { hint: NOT_A_SNAPSHOT_HINT, cause: error });
  if (code === 'EISDIR')
    return new InputFileError(path, undefined, 'is a directory, not a snapshot file', { cause: error });
  if (code === 'EACCES' || code === 'EPERM') {
    return new InputFileError(path, undefined, 'permission denied', {
      hint: 'Check the file permissions',
      cause: error,
    });
  }
  if (typeof code === 'string')
    return new InputFileError(path, undefined, `cannot read the file (${code})`, { cause: error });
  return error;
}
