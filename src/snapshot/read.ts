/** The snapshot reader of every command: streamed (a chunk and a line in memory), checked by `parser.ts`. */
import type { Connection } from '../model/connection.js';
import type { SnapshotScanProfile } from '../model/scan-profile.js';
import type { SnapshotHeader } from './format.js';
import { changedWhileRead, readLineBatches } from './lines.js';
import { SnapshotParser, type VerifiedSnapshot } from './parser.js';

export type { VerifiedSnapshot } from './parser.js';
export { type EntryPlace, type IndexedSnapshot, indexSnapshot, type PlacedSnapshot } from './placed.js';

export interface ReadSnapshotOptions {
  readonly signal?: AbortSignal;
  /** How messages name the file (default: `path`). */
  readonly label?: string;
  /** Bytes read per chunk; default 64 KiB (larger chunks pile up as external memory between GCs). */
  readonly chunkSize?: number;
}

export interface ReadEntriesOptions extends ReadSnapshotOptions {
  /** An earlier {@link verifySnapshot}'s result: reading fails at the end if the file changed since. */
  readonly expected?: Pick<VerifiedSnapshot, 'sha256' | 'entryCount'>;
}

/** Read and check the whole file; its facts, or an InputFileError naming the line. */
export function verifySnapshot(path: string, options: ReadSnapshotOptions = {}): Promise<VerifiedSnapshot> {
  return scanSnapshot(path, undefined, options);
}

/** Read and check the whole file, calling `onEntry` for each entry: trust them once this resolves. */
export async function scanSnapshot(
  path: string,
  onEntry: ((entry: Connection, line: number) => void) | undefined,
  options: ReadEntriesOptions & { readonly onProfile?: (profile: SnapshotScanProfile) => void } = {},
): Promise<VerifiedSnapshot> {
  const parser = new SnapshotParser(path, options.label ?? path);
  for await (const batch of readLineBatches(path, options)) {
    for (const raw of batch) {
      const parsed = parser.push(raw);
      if (parsed === undefined) continue;
      if (parsed.kind === 'connection') onEntry?.(parsed.entry, raw.number);
      else options.onProfile?.(parsed.profile);
    }
  }
  const verified = parser.finish();
  checkExpected(path, verified, options);
  return verified;
}

function checkExpected(path: string, verified: VerifiedSnapshot, options: ReadEntriesOptions): void {
  const expected = options.expected;
  if (expected && (expected.sha256 !== verified.sha256 || expected.entryCount !== verified.entryCount)) {
    throw changedWhileRead(options.label ?? path, undefined);
  }
}

/** The entries, checked as they go; the trailer is checked last, so consume to the end (or verify first). */
export async function* readSnapshotEntries(
  path: string,
  options: ReadEntriesOptions = {},
): AsyncGenerator<Connection, VerifiedSnapshot, undefined> {
  const parser = new SnapshotParser(path, options.label ?? path);
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

/** A whole snapshot in memory (small snapshots and tests), handed back once the trailer is checked. */
export async function loadSnapshot(
  path: string,
  options: ReadSnapshotOptions = {},
): Promise<{
  readonly header: SnapshotHeader;
  readonly entries: Connection[];
  readonly sha256: string;
  readonly profiles: SnapshotScanProfile[];
}> {
  const entries: Connection[] = [];
  const profiles: SnapshotScanProfile[] = [];
  const verified = await scanSnapshot(path, (entry) => entries.push(entry), {
    ...options,
    onProfile: (profile) => profiles.push(profile),
  });
  return { header: verified.header, entries, sha256: verified.sha256, profiles };
}
