/** The snapshot checksum: sha256 over the entry lines as stored, each with its `\n` (contract section 3). */
import { createHash } from 'node:crypto';

export interface EntryHasher {
  /** One entry line without its newline. */
  addLine(line: Uint8Array | string): void;
  /** Whole entry lines, each with its `\n`. */
  addRaw(bytes: Uint8Array): void;
  /** Lower-case hex; the hasher is spent. */
  digest(): string;
}

const NEWLINE = Buffer.from('\n');

export function createEntryHasher(): EntryHasher {
  const hash = createHash('sha256');
  return {
    addLine(line) {
      hash.update(line);
      hash.update(NEWLINE);
    },
    addRaw(bytes) {
      hash.update(bytes);
    },
    digest: () => hash.digest('hex'),
  };
}

/** sha256 of a list of entry lines (tests and small snapshots). */
export function hashEntryLines(lines: Iterable<string>): string {
  const hasher = createEntryHasher();
  for (const line of lines) hasher.addLine(line);
  return hasher.digest();
}
