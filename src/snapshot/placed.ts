/** A snapshot read and checked once in order, its entries read again later by their place in the file. */
import { closeSync, openSync, readSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import type { Connection } from '../model/connection.js';
import type { SnapshotScanProfile } from '../model/scan-profile.js';
import { changedWhileRead, type RawLine, readLineBatches } from './lines.js';
import { SnapshotParser, type VerifiedSnapshot } from './parser.js';
import type { ReadSnapshotOptions } from './read.js';
import { openSnapshotSource, type SnapshotSource, toReadError } from './source.js';

/** Where an entry's line is, to read it again: a few numbers kept instead of the entry. */
export interface EntryPlace {
  readonly offset: number;
  /** Without the newline. */
  readonly length: number;
  readonly line: number;
  /** A line read again must be the one read first (0 when the file is held: held bytes are those read). */
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
   * Hold a file of at most this many bytes in memory as it is read, for rereads (default 0: each reread reads
   * its line from the file): for a caller rereading most entries, a read per entry costs more than its parse.
   */
  readonly holdForRereadsUpTo?: number;
}

/**
 * The {@link PlacedSnapshotOptions.holdForRereadsUpTo} of a command that rereads every entry: about
 * 40 000 connections; a larger snapshot is reread line by line, so what is held stays bounded.
 */
export const HOLD_FOR_REREADS_BYTES = 32 * 1024 * 1024;

/** A snapshot's file, open to read its entries again by place. */
export interface PlacedSnapshot {
  /** The entry at a place {@link indexSnapshot} handed out; InputFileError when the line changed since. */
  reread(place: EntryPlace): Connection;
  /** Idempotent. */
  close(): void;
}

/** A snapshot read whole and verified by {@link indexSnapshot}, its file still open for rereads. */
export interface IndexedSnapshot {
  readonly verified: VerifiedSnapshot;
  readonly profiles: SnapshotScanProfile[];
  /** The caller closes it. */
  readonly file: PlacedSnapshot;
}

/**
 * Read and verify a snapshot in one pass, handing each connection with its place to `onEntry`; the
 * file stays open for rereads unless reading fails. Act on what `onEntry` saw only once this resolves.
 */
export async function indexSnapshot(
  path: string,
  onEntry: (placed: PlacedEntry, file: PlacedSnapshot) => void,
  options: PlacedSnapshotOptions = {},
): Promise<IndexedSnapshot> {
  const label = options.label ?? path;
  const parser = new SnapshotParser(path, label);
  const profiles: SnapshotScanProfile[] = [];
  // Every place handed out lies within the first `heldUpTo` bytes held.
  let held: Buffer | undefined;
  let heldUpTo = 0;
  let closed = false;
  // A plain file is reopened for rereads (refused if removed meanwhile); an encrypted one stays open.
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
        // The file vanished or cannot be read any more: a file error, not a bug.
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
    // An encrypted file stays open for the rereads.
    if (source !== encrypted) source.close();
  }
}
