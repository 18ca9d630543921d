/**
 * A snapshot file's bytes as lines: read a chunk at a time (synchronous reads into chunk buffers used
 * again, the event loop turned every megabyte), split at each `\n`, a line that spans chunks copied
 * whole. What the reader refuses about the file itself (missing, a directory, unreadable, a line too
 * long) is an InputFileError naming it.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { InputFileError, InterruptedError } from '../errors.js';
import { openSnapshotSource, type SnapshotSource, toReadError } from './source.js';

/** A line longer than this is refused rather than buffered: no connection is anywhere near it. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** The hint of an error in a snapshot's content. */
export const DAMAGED_HINT = 'The snapshot is damaged: export it again';

/** The snapshot is not the file that was checked any more: written to, or removed, during a command. */
export function changedWhileRead(label: string, line: number | undefined, removed?: { cause: unknown }) {
  return removed === undefined
    ? new InputFileError(label, line, 'the snapshot changed while it was being read', {
        hint: 'Do not write to a snapshot while a command reads it; re-run the command',
      })
    : new InputFileError(label, line, 'the snapshot was removed while it was being read', {
        hint: 'Keep the file in place while a command reads it; re-run the command',
        cause: removed.cause,
      });
}

export interface ReadLinesOptions {
  /** Stops reading (InterruptedError) when aborted. */
  readonly signal?: AbortSignal;
  /** How messages name the file (default: `path`). */
  readonly label?: string;
  /** Bytes read per chunk; default 64 KiB. */
  readonly chunkSize?: number;
  /** Called with each chunk's bytes as read, before its lines are handed out (they are valid only during the call). */
  readonly onChunk?: (chunk: Buffer) => void;
  /** The file, already open (the caller closes it); default: opened and closed here. */
  readonly source?: SnapshotSource;
}

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
 * machine where a first touch costs about 11 microseconds a page (the 2-core benchmark machine), 76 MB
 * read in fresh 256 KiB buffers spent about 50 ms in page faults, twice that for a diff of two
 * snapshots, besides the garbage collections that free them.
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

/**
 * Split the file into lines, one batch per chunk read (so a caller does not await per line). Shared
 * with `merge.ts`. A line's bytes may be a view of the chunk it was read in, and chunk buffers are
 * used again: they stay as they are until the batch after the next one is asked for. Every caller
 * takes a batch's lines in order before it asks for the next (the checksum's hasher holds on to the
 * last run of lines of a batch until the first line of the next one is added: see `checksum.ts`).
 */
export async function* readLineBatches(path: string, options: ReadLinesOptions): AsyncGenerator<RawLine[]> {
  const pool = new ChunkPool(options.chunkSize ?? 64 * 1024);
  const source = options.source ?? (await openSnapshotSource(path, options.label ?? path));
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
