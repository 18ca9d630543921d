/**
 * The snapshot checksum: sha256 over the entry lines, each with its `\n`, as bytes on disk (contract
 * section 3). Header and trailer are not covered.
 */
import { createHash, type Hash } from 'node:crypto';

export interface EntryHasher {
  /**
   * Add one entry line: its bytes without the newline; the newline is added here. `newlineFollows`:
   * the byte after `line` in its buffer is its `\n` (a line cut out of the chunk it was read in), so
   * lines that follow each other in one buffer are hashed as one run (one update instead of two per
   * line: a hundred thousand lines hashed in about a fifth less time).
   */
  addLine(line: Uint8Array | string, newlineFollows?: boolean): void;
  /** Add bytes that are already whole entry lines, each ending in its `\n`. */
  addRaw(bytes: Uint8Array): void;
  /** Lower-case hex digest; the hasher cannot be used afterwards. */
  digest(): string;
}

const NEWLINE = Buffer.from('\n');

export function createEntryHasher(): EntryHasher {
  const hash: Hash = createHash('sha256');
  // The run of lines not hashed yet: bytes [runStart, runEnd) of runBuffer, newlines included.
  let runBuffer: ArrayBufferLike | undefined;
  let runStart = 0;
  let runEnd = 0;
  const flush = () => {
    if (runBuffer === undefined) return;
    hash.update(new Uint8Array(runBuffer, runStart, runEnd - runStart));
    runBuffer = undefined;
  };
  return {
    addLine(line, newlineFollows = false) {
      if (typeof line !== 'string' && newlineFollows) {
        if (runBuffer === line.buffer && runEnd === line.byteOffset) {
          runEnd += line.byteLength + 1;
          return;
        }
        flush();
        runBuffer = line.buffer;
        runStart = line.byteOffset;
        runEnd = line.byteOffset + line.byteLength + 1;
        return;
      }
      flush();
      hash.update(line);
      hash.update(NEWLINE);
    },
    addRaw(bytes) {
      flush();
      hash.update(bytes);
    },
    digest() {
      flush();
      return hash.digest('hex');
    },
  };
}

/** sha256 of a list of entry lines (tests and small snapshots). */
export function hashEntryLines(lines: Iterable<string>): string {
  const hasher = createEntryHasher();
  for (const line of lines) hasher.addLine(line);
  return hasher.digest();
}
