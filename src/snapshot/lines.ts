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
  /** Valid until the next batch is asked for (the chunk buffer is used again). */
  readonly bytes: Buffer;
  /** 1-based. */
  readonly number: number;
  /** Byte offset of the line's start in the file. */
  readonly offset: number;
  /** False only for a last line that has no `\n`. */
  readonly terminated: boolean;
}

const NEWLINE = 0x0a;

/** Bytes read between two turns of the event loop (Ctrl-C, timers and sockets are served at each). */
const READ_BYTES_PER_TURN = 1024 * 1024;

/**
 * The file's bytes a chunk at a time, by synchronous reads into one buffer used again (no fresh memory
 * per chunk): a read from the page cache takes tens of microseconds, where each read of a read stream
 * is a round trip through libuv's thread pool that the reader waits for. The event loop is turned every
 * {@link READ_BYTES_PER_TURN} bytes. Each chunk is valid until the next one is asked for.
 */
async function* readChunks(source: SnapshotSource, size: number): AsyncGenerator<Buffer> {
  const buffer = Buffer.allocUnsafeSlow(size);
  let position = 0;
  let sinceTurn = 0;
  for (;;) {
    const length = source.readAt(buffer, size, position);
    if (length === 0) return;
    position += length;
    yield length < size ? buffer.subarray(0, length) : buffer;
    sinceTurn += length;
    if (sinceTurn >= READ_BYTES_PER_TURN) {
      sinceTurn = 0;
      await nextTurn();
    }
  }
}

/**
 * Split the file into lines, one batch per chunk read (so a caller does not await per line). Shared
 * with `merge.ts`. A line's bytes may be a view of the chunk it was read in, which is used again once
 * the next batch is asked for: every caller takes a batch's lines before it asks for the next.
 */
export async function* readLineBatches(path: string, options: ReadLinesOptions): AsyncGenerator<RawLine[]> {
  const source = options.source ?? (await openSnapshotSource(path, options.label ?? path));
  const chunks = readChunks(source, options.chunkSize ?? 64 * 1024);
  let pending: Buffer[] = [];
  let pendingLength = 0;
  let pendingStart = 0;
  let chunkStart = 0;
  let lineNumber = 0;
  try {
    for await (const chunk of chunks) {
      if (options.signal?.aborted) throw new InterruptedError('Interrupted while reading the snapshot');
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
        });
        start = end + 1;
      }
      if (start < chunk.length) {
        // Copied: the chunk buffer is used again for the next chunk.
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
      if (batch.length > 0) yield batch;
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
