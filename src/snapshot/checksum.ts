/**
 * The snapshot checksum: sha256 over the entry lines, each with its `\n`, as bytes on disk (contract
 * section 3). Header and trailer are not covered.
 */
import { createHash } from 'node:crypto';

export interface EntryHasher {
  /** Add one entry line: its bytes without the newline; the newline is added here. */
  addLine(line: Uint8Array | string): void;
  /** Add bytes that are already whole entry lines, each ending in its `\n`. */
  addRaw(bytes: Uint8Array): void;
  /** Lower-case hex digest; the hasher cannot be used afterwards. */
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
