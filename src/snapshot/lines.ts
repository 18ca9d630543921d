/** A snapshot file's bytes as lines, a chunk at a time; what is wrong with the file is an InputFileError. */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { InputFileError, InterruptedError } from '../errors.js';
import type { ReadSnapshotOptions } from './read.js';
import { openSnapshotSource, type SnapshotSource, toReadError } from './source.js';

/** A longer line is refused rather than buffered: no connection is anywhere near it. */
const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** The hint of an error in a snapshot's content. */
export const DAMAGED_HINT = 'The snapshot is damaged: export it again';

/** The snapshot was written to, or removed, during a command. */
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

export interface ReadLinesOptions extends ReadSnapshotOptions {
  /** Each chunk as read, before its lines (valid only during the call). */
  readonly onChunk?: (chunk: Buffer) => void;
  /** The file, already open (the caller closes it). */
  readonly source?: SnapshotSource;
}

/** One line of the file, without its newline. */
export interface RawLine {
  /** Valid until the next batch is asked for (the chunk buffer is used again). */
  readonly bytes: Buffer;
  /** 1-based. */
  readonly number: number;
  readonly offset: number;
  /** False only for a last line that has no `\n`. */
  readonly terminated: boolean;
}

const NEWLINE = 0x0a;

/** Bytes read between two turns of the event loop (Ctrl-C, timers and sockets are served then). */
const READ_BYTES_PER_TURN = 1024 * 1024;

/**
 * Synchronous reads into one buffer used again: a page-cache read takes tens of microseconds, where a
 * read stream's is a round trip through libuv's thread pool. Each chunk is valid until the next.
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

/** The file's lines, a batch per chunk (no await per line); a line may view the chunk, reused next batch. */
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
        // A line begun in an earlier chunk is copied whole into a buffer of its own.
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
        // Copied: the chunk buffer is used again.
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
