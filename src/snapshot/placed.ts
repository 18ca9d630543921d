/**
 * A snapshot read once in order, checked as every reader checks it, whose entries can be read again
 * later by their place in the file (a few numbers kept per connection instead of the connection).
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import type { Connection } from '../model/connection.js';
import type { SnapshotScanProfile } from '../model/scan-profile.js';
import { changedWhileRead, type RawLine, readLineBatches } from './lines.js';
import { SnapshotParser, type VerifiedSnapshot } from './parser.js';
import type { ReadSnapshotOptions } from './read.js';
import { openSnapshotSource, type SnapshotSource, toReadError } from './source.js';

/** Where an entry's line is in the file, to read it again later; a few numbers instead of the entry. */
export interface EntryPlace {
  readonly offset: number;
  /** Bytes of the line, without its newline. */
  readonly length: number;
  /** 1-based line number (messages). */
  readonly line: number;
  /**
   * CRC-32 of the line: a line read again must be the one read first (0 when the file is held in
   * memory as it was read: its held bytes are the ones read first).
   */
  readonly crc: number;
}

export interface PlacedEntry {
  readonly name: string;
  readonly type: string;
  readonly place: EntryPlace;
  readonly entry: Connection;
}

export interface PlacedSnapshotOptions extends ReadSnapshotOptions {
  /**
   * Rereads come from the whole file, kept in memory as it is read in order, when it holds at most
   * this many bytes (default 0: each reread reads its line from the file, checked against the CRC-32
   * of its first read). For a caller that rereads most entries: a read per entry costs more than the
   * entry's parse. The bytes kept are the very bytes checked, so a held line needs no CRC.
   */
  readonly holdForRereadsUpTo?: number;
}

/**
 * The {@link PlacedSnapshotOptions.holdForRereadsUpTo} of a command that reads every entry again
 * (import: when the plan checks it and when it is sent): a snapshot up to this size (about 40 000
 * connections) is held; a larger one is read again line by line, so what is held stays bounded whatever
 * the size of the snapshot. Either way what is read again is what was verified: a held line is the
 * bytes read first, a line read from the file is checked against their CRC-32.
 */
export const HOLD_FOR_REREADS_BYTES = 32 * 1024 * 1024;

/** A snapshot's file, open to read its entries again by place. */
export interface PlacedSnapshot {
  /**
   * The entry at `place` (a place {@link indexSnapshot} handed out), read from the file again and
   * parsed. Throws InputFileError when the line changed since it was read.
   */
  reread(place: EntryPlace): Connection;
  /** Release the file. Idempotent. */
  close(): void;
}

/** A snapshot read whole and verified by {@link indexSnapshot}, its file still open for rereads. */
export interface IndexedSnapshot {
  readonly verified: VerifiedSnapshot;
  /** The scan profiles (they follow the connections; few). */
  readonly profiles: SnapshotScanProfile[];
  /** Reads an entry again by the place `onEntry` was given; the caller closes it. */
  readonly file: PlacedSnapshot;
}

/**
 * Read and verify a snapshot in one pass, handing each connection with its place to `onEntry` (which
 * keeps what it needs of it: a name and a place, say) and keeping the scan profiles. The file stays
 * open to read entries again by place; it is closed here only when reading fails. Nothing `onEntry`
 * saw may be acted upon unless this resolves (the trailer is checked last).
 */
export async function indexSnapshot(
  path: string,
  onEntry: (placed: PlacedEntry, file: PlacedSnapshot) => void,
  options: PlacedSnapshotOptions = {},
): Promise<IndexedSnapshot> {
  const label = options.label ?? path;
  const parser = new SnapshotParser(path, label);
  const profiles: SnapshotScanProfile[] = [];
  // The file as read in order, its first `heldUpTo` bytes so far; every place handed out lies within them.
  let held: Buffer | undefined;
  let heldUpTo = 0;
  let closed = false;
  // A plain file is opened again for the rereads (one removed meanwhile is then refused); an encrypted
  // one is kept open from its first read.
  let fd: number | undefined;
  let encrypted: SnapshotSource | undefined;
  const lineAt = (place: EntryPlace): Buffer => {
    const bytes = Buffer.allocUnsafe(place.length);
    let read: number;
    if (encrypted !== undefined) read = encrypted.readAt(bytes, place.length, place.offset);
    else {
      fd ??= openSync(path, 'r');
      read = readSync(fd, bytes, 0, place.length, place.offset);
    }
    return read === place.length ? bytes : bytes.subarray(0, read);
  };
  const file: PlacedSnapshot = {
    reread(place) {
      if (closed) throw new Error('reread after close');
      const end = place.offset + place.length;
      if (held !== undefined && end <= heldUpTo)
        return parser.reparse(held.subarray(place.offset, end), place.line);
      let bytes: Buffer;
      try {
        bytes = lineAt(place);
      } catch (error) {
        // The file vanished or cannot be read any more (EIO, EACCES...): a file error, not a bug.
        if ((error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT')
          throw changedWhileRead(label, place.line, { cause: error });
        throw toReadError(label, error);
      }
      if (bytes.length !== place.length || crc32(bytes) !== place.crc) {
        throw changedWhileRead(label, place.line);
      }
      return parser.reparse(bytes, place.line);
    },
    close() {
      closed = true;
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
      encrypted?.close();
      encrypted = undefined;
      held = undefined;
    },
  };

  const source = await openSnapshotSource(path, label);
  if (source.encrypted) encrypted = source;
  // Held when small enough at the start; a file that then grows or shrinks was changed while read.
  const holdUpTo = options.holdForRereadsUpTo ?? 0;
  const holding =
    holdUpTo > 0 && source.size > 0 && source.size <= holdUpTo
      ? Buffer.allocUnsafeSlow(source.size)
      : undefined;
  held = holding;
  const onChunk =
    holding === undefined
      ? undefined
      : (chunk: Buffer) => {
          if (heldUpTo + chunk.length > holding.length) throw changedWhileRead(label, undefined);
          chunk.copy(holding, heldUpTo);
          heldUpTo += chunk.length;
        };
  // A connection's place: where to read it again (a line kept in memory needs no CRC).
  const placeOf = (raw: RawLine): EntryPlace => ({
    offset: raw.offset,
    length: raw.bytes.length,
    line: raw.number,
    crc: holding === undefined ? crc32(raw.bytes) : 0,
  });
  try {
    for await (const batch of readLineBatches(path, { ...options, onChunk, source })) {
      for (const raw of batch) {
        const parsed = parser.push(raw);
        if (parsed?.kind === 'scan-profile') profiles.push(parsed.profile);
        else if (parsed?.kind === 'connection') {
          const { entry } = parsed;
          onEntry({ name: entry.name, type: entry.type, entry, place: placeOf(raw) }, file);
        }
      }
    }
    const verified = parser.finish();
    if (holding !== undefined && heldUpTo !== holding.length) throw changedWhileRead(label, undefined);
    return { verified, profiles, file };
  } catch (error) {
    file.close();
    throw error;
  } finally {
    // An encrypted file stays open for the rereads (close() releases it).
    if (source !== encrypted) source.close();
  }
}
