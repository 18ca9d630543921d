/**
 * The one snapshot reader every command uses. It streams the file (memory stays flat: one chunk and
 * the current line), and refuses, naming the line (InputFileError, exit 2):
 * an empty file, a first line that is not a snapshot header, a wrong `kind`, a `formatVersion` newer
 * than this build or one no migration reaches, a line that is not JSON, an entry that is not an object
 * with a string `name` and `type`, entries out of name order or with a duplicate name, a missing trailer
 * (truncated), a last line without its newline (truncated), a wrong `entryCount` or `sha256`, and
 * anything after the trailer. Version 2: a scan profile line (`{"scanProfile":{...},"dataSourceNames":
 * [...]}`, no top-level `name`) that is malformed, out of name order or a duplicate, a connection line
 * after a profile line, profiles in a snapshot whose header does not include them, and trailer counts
 * (`connectionCount`, `scanProfileCount`) that do not match.
 *
 * Because entries must be in strict code-unit order of name, a duplicate name is always next to its
 * twin: the reader keeps only the previous name, never a set of all names.
 *
 * The checksum covers the entry lines as stored (bytes, each with its `\n`). Header and trailer are not
 * covered (contract); the header is checked for its shape instead.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { crc32 } from 'node:zlib';
import { compareNames } from '../connections/match.js';
import { InputFileError, InterruptedError } from '../errors.js';
import type { Connection } from '../model/connection.js';
import type { ScanProfile, SnapshotScanProfile } from '../model/scan-profile.js';
import { describeJsonError } from '../secrets.js';
import { createEntryHasher, type EntryHasher } from './checksum.js';
import {
  CURRENT_FORMAT_VERSION,
  SNAPSHOT_END_KIND,
  SNAPSHOT_KIND,
  SNAPSHOT_PARTS,
  type SnapshotHeader,
  type SnapshotPart,
  type SnapshotSelection,
} from './format.js';
import { EntryLineScan } from './line-scan.js';
import { composeMigrations, type MigrationRegistry, type Migrator, shippedMigrations } from './migrate.js';
import { openSnapshotSource, type SnapshotSource } from './source.js';

/** What a verified snapshot is: its header (migrated to the current version) and its checksum facts. */
export interface VerifiedSnapshot {
  readonly path: string;
  /** The header, migrated to {@link CURRENT_FORMAT_VERSION}. */
  readonly header: SnapshotHeader;
  /** The version the file was written in (before migration). */
  readonly storedFormatVersion: number;
  /** Connection entries (the trailer's `entryCount` also counts the scan profile lines). */
  readonly entryCount: number;
  /** Scan profile lines (0 in a version 1 snapshot). */
  readonly scanProfileCount: number;
  /** sha256 of the entry lines as stored, as in the trailer. */
  readonly sha256: string;
  /** How many entries of each type, in first-seen order. */
  readonly typeCounts: ReadonlyMap<string, number>;
}

/** Options of every reading function. */
export interface ReadSnapshotOptions {
  /** Migrations for older format versions; default the shipped ones. */
  readonly migrations?: MigrationRegistry;
  /** Stops reading (InterruptedError) when aborted. */
  readonly signal?: AbortSignal;
  /** How messages name the file (default: `path`), e.g. the path as the user typed it. */
  readonly label?: string;
  /** Bytes read per chunk; default 64 KiB (larger chunks pile up as external memory between GCs). */
  readonly chunkSize?: number;
}

/** Options of {@link readSnapshotEntries}. */
export interface ReadEntriesOptions extends ReadSnapshotOptions {
  /** The result of an earlier {@link verifySnapshot}: reading fails at the end if the file changed since. */
  readonly expected?: Pick<VerifiedSnapshot, 'sha256' | 'entryCount'>;
}

/** A line longer than this is refused rather than buffered: no connection is anywhere near it. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

const DAMAGED_HINT = 'The snapshot is damaged: export it again';
const NOT_A_SNAPSHOT_HINT = 'Give a file written by `dds-migrate export`';

/** The snapshot is not the file that was checked any more: written to, or removed, during a command. */
function changedWhileRead(label: string, line: number | undefined, removed?: { cause: unknown }) {
  return removed === undefined
    ? new InputFileError(label, line, 'the snapshot changed while it was being read', {
        hint: 'Do not write to a snapshot while a command reads it; re-run the command',
      })
    : new InputFileError(label, line, 'the snapshot was removed while it was being read', {
        hint: 'Keep the file in place while a command reads it; re-run the command',
        cause: removed.cause,
      });
}

/**
 * Read the whole file and check it; resolves to its facts, or rejects with an InputFileError naming
 * the line. Nothing is kept in memory but the current line.
 */
export function verifySnapshot(path: string, options: ReadSnapshotOptions = {}): Promise<VerifiedSnapshot> {
  return scanSnapshot(path, undefined, options);
}

/**
 * Read and check the whole file, calling `onEntry` for each entry (migrated) as it goes. Entries are
 * handed out before the trailer is checked: a caller that acts on them must wait for the promise to
 * resolve before trusting what it saw (`validate` collects problems and reports them only then).
 */
export async function scanSnapshot(
  path: string,
  onEntry: ((entry: Connection, line: number) => void) | undefined,
  options: ReadSnapshotOptions = {},
): Promise<VerifiedSnapshot> {
  return scanLines(path, onEntry, undefined, options);
}

async function scanLines(
  path: string,
  onEntry: ((entry: Connection, line: number) => void) | undefined,
  onProfile: ((profile: SnapshotScanProfile, line: number) => void) | undefined,
  options: ReadSnapshotOptions,
): Promise<VerifiedSnapshot> {
  const parser = new SnapshotParser(path, options.label ?? path, options.migrations ?? shippedMigrations);
  for await (const batch of readLineBatches(path, options)) {
    for (const raw of batch) {
      const parsed = parser.push(raw);
      if (parsed === undefined) continue;
      if (parsed.kind === 'connection') onEntry?.(parsed.entry, raw.number);
      else onProfile?.(parsed.profile, raw.number);
    }
  }
  return parser.finish();
}

function checkExpected(path: string, verified: VerifiedSnapshot, options: ReadEntriesOptions): void {
  const expected = options.expected;
  if (expected && (expected.sha256 !== verified.sha256 || expected.entryCount !== verified.entryCount)) {
    throw changedWhileRead(options.label ?? path, undefined);
  }
}

/**
 * Stream the entries of a snapshot (migrated to the current version), checking everything
 * {@link verifySnapshot} checks as it goes; the trailer is checked when the last entry has been handed
 * out, so a caller must consume to the end (or have verified first). With `expected`, throws at the
 * end when the file is not the one that was verified.
 */
export async function* readSnapshotEntries(
  path: string,
  options: ReadEntriesOptions = {},
): AsyncGenerator<Connection, VerifiedSnapshot, undefined> {
  const parser = new SnapshotParser(path, options.label ?? path, options.migrations ?? shippedMigrations);
  for await (const batch of readLineBatches(path, options)) {
    const entries: Connection[] = [];
    for (const raw of batch) {
      const parsed = parser.push(raw);
      if (parsed?.kind === 'connection') entries.push(parsed.entry);
    }
    yield* entries;
  }
  const verified = parser.finish();
  checkExpected(path, verified, options);
  return verified;
}

/**
 * A whole snapshot in memory: for small snapshots and tests. One pass: the entries are collected as
 * they are checked and handed back only once the trailer is (a damaged file returns nothing).
 */
export async function loadSnapshot(
  path: string,
  options: ReadSnapshotOptions = {},
): Promise<{
  readonly header: SnapshotHeader;
  readonly entries: Connection[];
  readonly sha256: string;
  /** The scan profiles (version 2; empty for a version 1 snapshot). */
  readonly profiles: SnapshotScanProfile[];
}> {
  // One pass: what is collected is handed back only once the trailer is checked.
  const entries: Connection[] = [];
  const profiles: SnapshotScanProfile[] = [];
  const verified = await scanLines(
    path,
    (entry) => entries.push(entry),
    (profile) => profiles.push(profile),
    options,
  );
  return { header: verified.header, entries, sha256: verified.sha256, profiles };
}

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

/** A connection's name and type, with its place in the file. */
export interface PlacedName {
  readonly name: string;
  readonly type: string;
  readonly place: EntryPlace;
}

/** An entry with its place in the file. */
export interface PlacedEntry extends PlacedName {
  readonly entry: Connection;
}

/** A line of {@link PlacedSnapshot.entries}: its entry parsed, or (`scanLines`) undefined when only scanned. */
export interface PlacedLine extends PlacedName {
  readonly entry: Connection | undefined;
}

/** Options of {@link openPlacedSnapshot} and {@link indexSnapshot}. */
export interface PlacedSnapshotOptions extends ReadEntriesOptions {
  /**
   * Rereads come from the whole file, kept in memory as it is read in order, when it holds at most
   * this many bytes (default 0: each reread reads its line from the file, checked against the CRC-32
   * of its first read). For a caller that rereads most entries: a read per entry costs more than the
   * entry's parse. The bytes kept are the very bytes checked, so a held line needs no CRC: on the
   * seventh session's machine the CRC of every line, at its first read and at its reread, and the
   * second read of the whole file were about 0.5 s of a 100 000-connection diff's snapshot side.
   */
  readonly holdForRereadsUpTo?: number;
  /**
   * Lines are scanned (`line-scan.ts`: checked as JSON without being parsed) where the scan reads
   * them, for a caller that needs only each connection's name and type in this pass (`entry` is then
   * undefined; it is read again by place when needed). On 100 000 connections a scan is a fraction of
   * a parse and of the collections that follow it. A line the scan declines is parsed, as before.
   */
  readonly scanLines?: boolean;
}

/** A snapshot read once in order (checked as {@link readSnapshotEntries} checks it), whose entries can be read again by place. */
export interface PlacedSnapshot {
  /** Every entry with its place; the trailer is checked after the last one. */
  readonly entries: AsyncGenerator<PlacedLine, VerifiedSnapshot, undefined>;
  /**
   * The entry at `place` (a place `entries` has handed out), read from the file again, parsed and
   * migrated. Throws InputFileError when the line changed since it was read.
   */
  reread(place: EntryPlace): Connection;
  /** Release the file handle that {@link PlacedSnapshot.reread} opened, if any. Idempotent. */
  close(): void;
}

/**
 * Read a snapshot in order, keeping nothing: a caller that needs an entry again later (`diff` waiting
 * for its twin on the other side) keeps its {@link EntryPlace} and rereads it.
 */
export function openPlacedSnapshot(
  path: string,
  options: PlacedSnapshotOptions & {
    /** Called with each scan profile line (they follow the connections); default: skipped. */
    readonly onProfile?: (profile: SnapshotScanProfile) => void;
  } = {},
): PlacedSnapshot {
  const label = options.label ?? path;
  const parser = new SnapshotParser(path, label, options.migrations ?? shippedMigrations);
  let fd: number | undefined;
  /**
   * The file as read in order, its first `heldUpTo` bytes so far (see
   * {@link PlacedSnapshotOptions.holdForRereadsUpTo}); every place handed out lies within them.
   */
  let held: Buffer | undefined;
  let heldUpTo = 0;
  let closed = false;
  /** An encrypted file, kept open from its first read for the rereads (a plain one is opened again). */
  let encrypted: SnapshotSource | undefined;
  /** The line at `place`, read from the file. */
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
  const scan = options.scanLines === true ? new EntryLineScan() : undefined;
  async function* entries(): AsyncGenerator<PlacedLine, VerifiedSnapshot, undefined> {
    // Held when small enough at the start; a file that then grows or shrinks was changed while read.
    const holdUpTo = options.holdForRereadsUpTo ?? 0;
    const source = await openSource(path, label);
    if (source.encrypted && !closed) encrypted = source;
    const size = holdUpTo > 0 ? source.size : 0;
    const holding = size > 0 && size <= holdUpTo ? Buffer.allocUnsafeSlow(size) : undefined;
    held = holding;
    const onChunk =
      holding === undefined
        ? undefined
        : (chunk: Buffer) => {
            if (heldUpTo + chunk.length > holding.length) throw changedWhileRead(label, undefined);
            chunk.copy(holding, heldUpTo);
            heldUpTo += chunk.length;
          };
    try {
      for await (const batch of readLineBatches(path, { ...options, onChunk, source })) {
        const placed: PlacedLine[] = [];
        // A connection's place: where to read it again (a line kept in memory needs no CRC).
        const placeOf = (raw: RawLine): EntryPlace => ({
          offset: raw.offset,
          length: raw.bytes.length,
          line: raw.number,
          crc: holding === undefined ? crc32(raw.bytes) : 0,
        });
        for (const raw of batch) {
          const scanned = scan === undefined ? undefined : parser.pushIfScanned(raw, scan);
          if (scanned !== undefined) {
            placed.push({ name: scanned.name, type: scanned.type, entry: undefined, place: placeOf(raw) });
            continue;
          }
          const parsed = parser.push(raw);
          if (parsed?.kind === 'scan-profile') options.onProfile?.(parsed.profile);
          if (parsed?.kind !== 'connection') continue;
          const { entry } = parsed;
          placed.push({ name: entry.name, type: entry.type, entry, place: placeOf(raw) });
        }
        yield* placed;
      }
    } finally {
      // An encrypted file stays open for the rereads (close() releases it).
      if (source !== encrypted) source.close();
    }
    const verified = parser.finish();
    if (holding !== undefined && heldUpTo !== holding.length) throw changedWhileRead(label, undefined);
    return verified;
  }
  return {
    entries: entries(),
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
  options: Omit<PlacedSnapshotOptions, 'expected' | 'scanLines'> = {},
): Promise<IndexedSnapshot> {
  // Lines parsed, never only scanned: every line handed out has its entry.
  return indexPlaced(path, onEntry as (placed: PlacedLine, file: PlacedSnapshot) => void, {
    ...options,
    scanLines: false,
  });
}

/**
 * {@link indexSnapshot} for a caller that needs each connection's name and type only (its entry is
 * read again by place when needed): the lines are scanned rather than parsed where they can be
 * (see {@link PlacedSnapshotOptions.scanLines}).
 */
export async function indexSnapshotNames(
  path: string,
  onEntry: (placed: PlacedName, file: PlacedSnapshot) => void,
  options: Omit<PlacedSnapshotOptions, 'expected' | 'scanLines'> = {},
): Promise<IndexedSnapshot> {
  return indexPlaced(path, onEntry, { ...options, scanLines: true });
}

async function indexPlaced(
  path: string,
  onEntry: (placed: PlacedLine, file: PlacedSnapshot) => void,
  options: Omit<PlacedSnapshotOptions, 'expected'>,
): Promise<IndexedSnapshot> {
  const profiles: SnapshotScanProfile[] = [];
  const file = openPlacedSnapshot(path, { ...options, onProfile: (p) => profiles.push(p) });
  try {
    for (let next = await file.entries.next(); ; next = await file.entries.next()) {
      if (next.done === true) return { verified: next.value, profiles, file };
      onEntry(next.value, file);
    }
  } catch (error) {
    file.close();
    throw error;
  }
}

/** What one line held. */
type ParsedLine =
  | { readonly kind: 'connection'; readonly entry: Connection }
  | { readonly kind: 'scan-profile'; readonly profile: SnapshotScanProfile };

// ---- lines -------------------------------------------------------------------------------------

/** One line of the file, without its newline. */
export interface RawLine {
  /** Valid until the batch after the next one is asked for (chunk buffers are used again). */
  readonly bytes: Buffer;
  /** 1-based. */
  readonly number: number;
  /** Byte offset of the line's start in the file. */
  readonly offset: number;
  /** False only for a last line that has no `\n`. */
  readonly terminated: boolean;
  /** True when the byte after `bytes` in its buffer is the line's `\n` (a line read whole within one chunk). */
  readonly newlineFollows?: boolean;
}

const NEWLINE = 0x0a;

/** Bytes read between two turns of the event loop (Ctrl-C, timers and sockets are served at each). */
const READ_BYTES_PER_TURN = 1024 * 1024;

/**
 * Chunk buffers used again. A buffer allocated per chunk is memory never touched before: on a
 * machine where a first touch costs about 11 microseconds a page (the 2-core benchmark machine of the
 * seventh session), 76 MB read in fresh 256 KiB buffers spent about 50 ms in page faults, twice that for
 * a diff of two snapshots, besides the garbage collections that free them.
 */
class ChunkPool {
  private readonly free: Buffer[] = [];

  constructor(readonly size: number) {}

  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafeSlow(this.size);
  }

  give(buffer: Buffer): void {
    if (this.free.length < 2) this.free.push(buffer);
  }
}

/**
 * The file's bytes a chunk at a time, by synchronous reads: a read from the page cache takes tens of
 * microseconds, where each read of a read stream is a round trip through libuv's thread pool that
 * the reader waits for (two 76 MB snapshots merged side by side waited 40 to 90 ms of their 0.75 s,
 * on two cores). The event loop is turned every {@link READ_BYTES_PER_TURN} bytes. Each chunk is a
 * buffer of `pool` holding `length` bytes read; the caller gives it back once nothing refers to it.
 */
async function* readChunks(
  source: SnapshotSource,
  pool: ChunkPool,
): AsyncGenerator<{ readonly buffer: Buffer; readonly length: number }> {
  let position = 0;
  let sinceTurn = 0;
  for (;;) {
    const buffer = pool.take();
    const length = source.readAt(buffer, pool.size, position);
    if (length === 0) {
      pool.give(buffer);
      return;
    }
    position += length;
    yield { buffer, length };
    sinceTurn += length;
    if (sinceTurn >= READ_BYTES_PER_TURN) {
      sinceTurn = 0;
      await nextTurn();
    }
  }
}

/** The file's bytes, decrypted when it is an age file (`source.ts`); file errors as {@link toReadError}'s. */
async function openSource(path: string, label: string): Promise<SnapshotSource> {
  try {
    return await openSnapshotSource(path, label);
  } catch (error) {
    throw toReadError(label, error);
  }
}

/**
 * Split the file into lines, one batch per chunk read (so a caller does not await per line). Shared
 * with `merge.ts`. A line's bytes may be a view of the chunk it was read in, and chunk buffers are
 * used again: they stay as they are until the batch after the next one is asked for. Every caller
 * takes a batch's lines in order before it asks for the next (the checksum's hasher holds on to the
 * last run of lines of a batch until the first line of the next one is added: see `checksum.ts`).
 */
export async function* readLineBatches(
  path: string,
  options: ReadSnapshotOptions & {
    /** Called with each chunk's bytes as read, before its lines are handed out (they are valid only during the call). */
    readonly onChunk?: (chunk: Buffer) => void;
    /** The file, already open (the caller closes it); default: opened and closed here. */
    readonly source?: SnapshotSource;
  },
): AsyncGenerator<RawLine[]> {
  const pool = new ChunkPool(options.chunkSize ?? 64 * 1024);
  const source = options.source ?? (await openSource(path, options.label ?? path));
  const chunks = readChunks(source, pool);
  // The chunks of the last two batches handed out, oldest first.
  const handedOut: Buffer[] = [];
  let pending: Buffer[] = [];
  let pendingLength = 0;
  let pendingStart = 0;
  let chunkStart = 0;
  let lineNumber = 0;
  try {
    for await (const { buffer, length } of chunks) {
      if (options.signal?.aborted) throw new InterruptedError('Interrupted while reading the snapshot');
      const chunk = length < buffer.length ? buffer.subarray(0, length) : buffer;
      options.onChunk?.(chunk);
      const batch: RawLine[] = [];
      let start = 0;
      for (;;) {
        const end = chunk.indexOf(NEWLINE, start);
        if (end < 0) break;
        let bytes = chunk.subarray(start, end);
        // A line begun in an earlier chunk is copied whole into a buffer of its own, without its newline.
        const withinChunk = pendingLength === 0;
        const offset = withinChunk ? chunkStart + start : pendingStart;
        if (!withinChunk) {
          pending.push(bytes);
          bytes = Buffer.concat(pending, pendingLength + bytes.length);
          pending = [];
          pendingLength = 0;
        }
        lineNumber += 1;
        batch.push({
          bytes,
          number: lineNumber,
          offset,
          terminated: true,
          newlineFollows: withinChunk,
        });
        start = end + 1;
      }
      if (start < chunk.length) {
        // Copy: keeping a slice would pin the whole chunk.
        const rest = Buffer.from(chunk.subarray(start));
        if (pendingLength === 0) pendingStart = chunkStart + start;
        pending.push(rest);
        pendingLength += rest.length;
        if (pendingLength > MAX_LINE_BYTES) {
          throw new InputFileError(
            options.label ?? path,
            lineNumber + 1,
            `line is longer than ${MAX_LINE_BYTES} bytes`,
            {
              hint: DAMAGED_HINT,
            },
          );
        }
      }
      chunkStart += chunk.length;
      if (batch.length === 0) {
        // Nothing refers to it: its bytes were copied into a line still being read.
        pool.give(buffer);
        continue;
      }
      handedOut.push(buffer);
      yield batch;
      // Asked for the batch after this one: the batch before this one is done with (its last lines'
      // hash run was flushed when this batch's first line was added).
      if (handedOut.length > 1) pool.give(handedOut.shift() as Buffer);
    }
  } catch (error) {
    throw toReadError(options.label ?? path, error);
  } finally {
    await chunks.return(undefined);
    if (options.source === undefined) source.close();
  }
  if (pendingLength > 0) {
    yield [
      {
        bytes: Buffer.concat(pending, pendingLength),
        number: lineNumber + 1,
        offset: pendingStart,
        terminated: false,
      },
    ];
  }
}

function toReadError(path: string, error: unknown): unknown {
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

// ---- parsing -----------------------------------------------------------------------------------

/** The state of one pass over a snapshot. Push lines in order, then `finish`. Shared with `merge.ts`. */
export class SnapshotParser {
  private header: SnapshotHeader | undefined;
  private storedFormatVersion = 0;
  private migrator: Migrator | undefined;
  private readonly hasher: EntryHasher = createEntryHasher();
  private count = 0;
  private previousName: string | undefined;
  private previousLine = 0;
  private trailer: { entryCount: number; sha256: string; line: number } | undefined;
  private lastLine = 0;
  private readonly typeCounts = new Map<string, number>();
  private profileCount = 0;
  private previousProfile: { name: string; line: number } | undefined;

  constructor(
    private readonly path: string,
    /** The file's name in messages. */
    private readonly label: string,
    private readonly migrations: MigrationRegistry,
  ) {}

  /** True once the header line is read. */
  get headerRead(): boolean {
    return this.header !== undefined;
  }

  /**
   * True once the header is read and entries need no migration: a line's JSON value is then its
   * entry, so a value parsed from byte-equal text may be handed to {@link SnapshotParser.push}.
   */
  get takesEntriesAsParsed(): boolean {
    return this.migrator?.identity === true;
  }

  /**
   * Take one line; returns the entry or scan profile it holds, if any. `parsed`, when given, is the
   * line's JSON value, already parsed from byte-equal text (see {@link SnapshotParser.takesEntriesAsParsed}):
   * everything is checked as usual but the parse itself.
   */
  push(raw: RawLine, parsed?: unknown): ParsedLine | undefined {
    this.checkPlace(raw);
    if (this.header === undefined) {
      this.readHeader(raw);
      return undefined;
    }
    const value = parsed === undefined ? this.parseJson(raw) : parsed;
    if (isPlainObject(value) && value.kind === SNAPSHOT_END_KIND && !Object.hasOwn(value, 'name')) {
      this.readTrailer(value, raw.number);
      return undefined;
    }
    if (this.storedFormatVersion >= 2 && isProfileLine(value)) {
      return { kind: 'scan-profile', profile: this.readProfile(value, raw) };
    }
    this.checkConnectionPlace(raw);
    return { kind: 'connection', entry: this.readEntry(value, raw) };
  }

  /**
   * Take one entry line without parsing it, when `scan` reads it (`line-scan.ts`) as a JSON object
   * with a string `name` and `type` and this file's entries need no migration: checked as
   * {@link SnapshotParser.push} checks it. Returns its name and type; undefined when nothing was
   * taken (push the line instead: a line the scan declines, a profile, the trailer).
   */
  pushIfScanned(
    raw: RawLine,
    scan: EntryLineScan,
  ): { readonly name: string; readonly type: string } | undefined {
    if (!this.takesEntriesAsParsed || !scan.scan(raw.bytes)) return undefined;
    const name = scan.name();
    const type = scan.type();
    if (name === undefined || type === undefined) return undefined;
    this.pushScanned(raw, name, type);
    return { name, type };
  }

  /**
   * Take one entry line scanned (`line-scan.ts`) instead of parsed: a JSON object whose
   * `name` and `type` are strings, and no more is known of it (see {@link SnapshotParser.takesEntriesAsParsed}:
   * only when its JSON value is its entry). Checked as {@link SnapshotParser.push} checks it.
   */
  pushScanned(raw: RawLine, name: string, type: string): void {
    this.checkPlace(raw);
    if (this.migrator?.identity !== true) throw new Error('a scanned line taken where entries are migrated');
    // A line with a "name" is neither the trailer nor a scan profile: a connection.
    this.checkConnectionPlace(raw);
    this.acceptEntry(name, type, raw);
  }

  /** A line may come here: not after the trailer, not the file's cut-off end. */
  private checkPlace(raw: RawLine): void {
    this.lastLine = raw.number;
    if (this.trailer !== undefined) {
      throw this.fail(raw.number, `unexpected content after the trailer (line ${this.trailer.line})`);
    }
    if (!raw.terminated) {
      throw this.fail(raw.number, 'the last line is incomplete (no newline): the snapshot is truncated');
    }
  }

  /** A connection line may come here: before the scan profiles. */
  private checkConnectionPlace(raw: RawLine): void {
    if (this.previousProfile !== undefined) {
      throw this.fail(
        raw.number,
        `a connection line after the scan profiles (line ${this.previousProfile.line}): connections come first`,
      );
    }
  }

  /** An entry line read again (see {@link openPlacedSnapshot}): parsed and migrated, not re-checked. */
  reparse(bytes: Buffer, line: number): Connection {
    const value = this.parseJson({ bytes, number: line, offset: 0, terminated: true });
    return this.migrator?.identity === false
      ? this.migrator.migrateEntry(value as Record<string, unknown>)
      : (value as Connection);
  }

  /** Check the end of the file and return the facts. */
  finish(): VerifiedSnapshot {
    if (this.header === undefined) {
      throw new InputFileError(this.label, undefined, 'the file is empty, not a snapshot', {
        hint: NOT_A_SNAPSHOT_HINT,
      });
    }
    if (this.trailer === undefined) {
      throw this.fail(this.lastLine + 1, `no trailer after line ${this.lastLine}: the snapshot is truncated`);
    }
    return {
      path: this.path,
      header: this.header,
      storedFormatVersion: this.storedFormatVersion,
      entryCount: this.count,
      scanProfileCount: this.profileCount,
      sha256: this.trailer.sha256,
      typeCounts: this.typeCounts,
    };
  }

  private readHeader(raw: RawLine): void {
    let bytes = raw.bytes;
    // A byte-order mark added by an editor: the header is not checksummed, so it is harmless.
    if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8'));
    } catch {
      throw new InputFileError(
        this.label,
        raw.number,
        'not a dds-migrate snapshot (line 1 is not a JSON header)',
        {
          hint: NOT_A_SNAPSHOT_HINT,
        },
      );
    }
    if (!isPlainObject(value) || typeof value.kind !== 'string') {
      throw new InputFileError(this.label, raw.number, 'not a dds-migrate snapshot (line 1 has no "kind")', {
        hint: NOT_A_SNAPSHOT_HINT,
      });
    }
    if (value.kind !== SNAPSHOT_KIND) {
      throw new InputFileError(
        this.label,
        raw.number,
        `not a dds-migrate snapshot: kind is ${JSON.stringify(value.kind)}, expected "${SNAPSHOT_KIND}"`,
        { hint: NOT_A_SNAPSHOT_HINT },
      );
    }
    const version = value.formatVersion;
    if (typeof version !== 'number' || !Number.isInteger(version) || version < 0) {
      throw this.fail(raw.number, `formatVersion must be an integer >= 0, got ${JSON.stringify(version)}`);
    }
    if (version > CURRENT_FORMAT_VERSION) {
      throw new InputFileError(
        this.label,
        raw.number,
        `formatVersion ${version} is newer than this dds-migrate reads (${CURRENT_FORMAT_VERSION})`,
        { hint: 'Upgrade dds-migrate to read this snapshot' },
      );
    }
    const chain = this.migrations.chain(version);
    if (chain === undefined) {
      throw new InputFileError(this.label, raw.number, `formatVersion ${version} is no longer supported`, {
        hint: 'Export the snapshot again with this dds-migrate',
      });
    }
    this.migrator = composeMigrations(chain);
    this.storedFormatVersion = version;
    const migrated = this.migrator.migrateHeader(value);
    const problem = describeHeaderProblem(migrated);
    if (problem !== undefined) throw this.fail(raw.number, `bad snapshot header: ${problem}`);
    this.header = normalizeHeader(migrated);
  }

  private readTrailer(value: Record<string, unknown>, line: number): void {
    const { entryCount, sha256 } = value;
    if (typeof entryCount !== 'number' || !Number.isInteger(entryCount) || entryCount < 0) {
      throw this.fail(line, `trailer entryCount must be an integer >= 0, got ${JSON.stringify(entryCount)}`);
    }
    if (typeof sha256 !== 'string') throw this.fail(line, 'trailer has no sha256');
    const total = this.count + this.profileCount;
    if (entryCount !== total) {
      throw this.fail(line, `trailer says ${entryCount} entries but the snapshot holds ${total}`);
    }
    const actual = this.hasher.digest();
    if (sha256 !== actual) {
      throw this.fail(line, 'sha256 in the trailer does not match the entries (the snapshot was changed)');
    }
    if (this.storedFormatVersion >= 2) {
      const counts: [string, unknown, number][] = [
        ['connectionCount', value.connectionCount, this.count],
        ['scanProfileCount', value.scanProfileCount, this.profileCount],
      ];
      for (const [field, stated, actual] of counts) {
        if (stated !== actual) {
          throw this.fail(
            line,
            `trailer ${field} is ${JSON.stringify(stated ?? null)} but the snapshot holds ${actual}`,
          );
        }
      }
    }
    this.trailer = { entryCount, sha256, line };
  }

  private readEntry(value: unknown, raw: RawLine): Connection {
    if (!isPlainObject(value)) throw this.fail(raw.number, 'entry is not a JSON object');
    const entry =
      this.migrator?.identity === false ? this.migrator.migrateEntry(value) : (value as Connection);
    const { name, type } = entry as Record<string, unknown>;
    this.acceptEntry(name, type, raw);
    return entry;
  }

  /** An entry's line counted and hashed, its name and type checked (and its name's order). */
  private acceptEntry(name: unknown, type: unknown, raw: RawLine): void {
    const line = raw.number;
    this.hasher.addLine(raw.bytes, raw.newlineFollows);
    this.count += 1;
    if (typeof name !== 'string' || name === '') throw this.fail(line, 'entry has no string "name"');
    if (typeof type !== 'string' || type === '') {
      throw this.fail(line, `entry ${JSON.stringify(name)} has no string "type"`);
    }
    if (this.previousName !== undefined) {
      const order = compareNames(this.previousName, name);
      if (order === 0) {
        throw this.fail(line, `duplicate name ${JSON.stringify(name)} (also on line ${this.previousLine})`);
      }
      if (order > 0) {
        throw this.fail(
          line,
          `entries are not sorted by name: ${JSON.stringify(name)} comes after ${JSON.stringify(this.previousName)}`,
        );
      }
    }
    this.previousName = name;
    this.previousLine = line;
    this.typeCounts.set(type, (this.typeCounts.get(type) ?? 0) + 1);
  }

  private readProfile(value: Record<string, unknown>, raw: RawLine): SnapshotScanProfile {
    const line = raw.number;
    if (this.header?.include.includes('scanProfiles') !== true) {
      throw this.fail(line, 'a scan profile line, but the header does not include "scanProfiles"');
    }
    this.hasher.addLine(raw.bytes, raw.newlineFollows);
    this.profileCount += 1;
    const problem = describeProfileProblem(value);
    if (problem !== undefined) throw this.fail(line, `scan profile ${problem}`);
    const profile = value.scanProfile as ScanProfile;
    const name = profile.name;
    const previous = this.previousProfile;
    if (previous !== undefined) {
      const order = compareNames(previous.name, name);
      if (order === 0) {
        throw this.fail(
          line,
          `duplicate scan profile name ${JSON.stringify(name)} (also on line ${previous.line})`,
        );
      }
      if (order > 0) {
        throw this.fail(
          line,
          `scan profiles are not sorted by name: ${JSON.stringify(name)} comes after ${JSON.stringify(previous.name)}`,
        );
      }
    }
    this.previousProfile = { name, line };
    return { scanProfile: profile, dataSourceNames: value.dataSourceNames as (string | null)[] };
  }

  private parseJson(raw: RawLine): unknown {
    try {
      return JSON.parse(raw.bytes.toString('utf8'));
    } catch (error) {
      throw this.fail(raw.number, `not valid JSON (${describeJsonError(error)})`);
    }
  }

  private fail(line: number, message: string): InputFileError {
    return new InputFileError(this.label, line, message, { hint: DAMAGED_HINT });
  }
}

/** The header with every field in place (an older version may omit a `null` selection field). */
function normalizeHeader(h: Record<string, unknown>): SnapshotHeader {
  const source = h.source as { url: string; environment: string };
  const selection = h.selection as Partial<SnapshotSelection>;
  return {
    kind: SNAPSHOT_KIND,
    formatVersion: CURRENT_FORMAT_VERSION,
    createdAt: h.createdAt as string,
    tool: h.tool as string,
    source: { url: source.url, environment: source.environment },
    selection: { ids: selection.ids ?? null, types: selection.types ?? null, name: selection.name ?? null },
    include: SNAPSHOT_PARTS.filter((p) => (h.include as readonly SnapshotPart[]).includes(p)),
  };
}

/** A scan profile line: no top-level `name` (every connection has one) and a `scanProfile` key. */
function isProfileLine(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) && !Object.hasOwn(value, 'name') && Object.hasOwn(value, 'scanProfile');
}

/** Why a profile line does not have its shape, or undefined. */
function describeProfileProblem(value: Record<string, unknown>): string | undefined {
  const profile = value.scanProfile;
  if (!isPlainObject(profile)) return '"scanProfile" is not an object';
  if (typeof profile.name !== 'string' || profile.name === '') return 'has no string "name"';
  const label = JSON.stringify(profile.name);
  const list = profile.dataSourceList;
  if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) {
    return `${label}: "dataSourceList" is not a list of strings`;
  }
  const names = value.dataSourceNames;
  if (!Array.isArray(names) || !names.every((x) => x === null || typeof x === 'string')) {
    return `${label}: "dataSourceNames" is not a list of strings or nulls`;
  }
  if (names.length !== list.length) {
    return `${label}: "dataSourceNames" has ${names.length} elements, "dataSourceList" ${list.length}`;
  }
  return undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function isStringArrayOrNull(value: unknown): value is readonly string[] | null {
  return value === null || (Array.isArray(value) && value.every((v) => typeof v === 'string'));
}

/** Why a (migrated) header does not have the shape of {@link SnapshotHeader}, or undefined. */
function describeHeaderProblem(h: Record<string, unknown>): string | undefined {
  if (h.formatVersion !== CURRENT_FORMAT_VERSION)
    return `formatVersion ${String(h.formatVersion)} after migration`;
  if (typeof h.createdAt !== 'string') return 'createdAt must be a string';
  if (typeof h.tool !== 'string') return 'tool must be a string';
  const source = h.source;
  if (!isPlainObject(source) || typeof source.url !== 'string' || typeof source.environment !== 'string') {
    return 'source must be {url, environment} strings';
  }
  const selection = h.selection as Partial<SnapshotSelection> | undefined;
  if (!isPlainObject(selection)) return 'selection must be an object';
  if (!isStringArrayOrNull(selection.ids ?? null)) return 'selection.ids must be a list of strings or null';
  if (!isStringArrayOrNull(selection.types ?? null))
    return 'selection.types must be a list of strings or null';
  const name = selection.name ?? null;
  if (name !== null && typeof name !== 'string') return 'selection.name must be a string or null';
  const include = h.include;
  if (
    !Array.isArray(include) ||
    include.length === 0 ||
    !include.every((p) => SNAPSHOT_PARTS.includes(p as SnapshotPart))
  ) {
    return `include must be a non-empty list of ${SNAPSHOT_PARTS.map((p) => JSON.stringify(p)).join(', ')}`;
  }
  return undefined;
}
