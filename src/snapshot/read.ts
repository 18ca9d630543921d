/**
 * The one snapshot reader every command uses. It streams the file (memory stays flat: one chunk and
 * the current line), and refuses, naming the line (InputFileError, exit 2):
 * an empty file, a first line that is not a snapshot header, a wrong `kind`, a `formatVersion` newer
 * than this build or older than 1, a line that is not JSON, an entry that is not an object
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
import type { Connection } from '../model/connection.js';
import type { SnapshotScanProfile } from '../model/scan-profile.js';
import type { SnapshotHeader } from './format.js';
import { changedWhileRead, readLineBatches } from './lines.js';
import { SnapshotParser, type VerifiedSnapshot } from './parser.js';

export type { VerifiedSnapshot } from './parser.js';
export { type EntryPlace, type IndexedSnapshot, indexSnapshot, type PlacedSnapshot } from './placed.js';

export interface ReadSnapshotOptions {
  /** Stops reading (InterruptedError) when aborted. */
  readonly signal?: AbortSignal;
  /** How messages name the file (default: `path`), e.g. the path as the user typed it. */
  readonly label?: string;
  /** Bytes read per chunk; default 64 KiB (larger chunks pile up as external memory between GCs). */
  readonly chunkSize?: number;
}

export interface ReadEntriesOptions extends ReadSnapshotOptions {
  /** The result of an earlier {@link verifySnapshot}: reading fails at the end if the file changed since. */
  readonly expected?: Pick<VerifiedSnapshot, 'sha256' | 'entryCount'>;
}

/**
 * Read the whole file and check it; resolves to its facts, or rejects with an InputFileError naming
 * the line. Nothing is kept in memory but the current line.
 */
export function verifySnapshot(path: string, options: ReadSnapshotOptions = {}): Promise<VerifiedSnapshot> {
  return scanSnapshot(path, undefined, options);
}

/**
 * Read and check the whole file, calling `onEntry` for each entry as it goes. Entries are
 * handed out before the trailer is checked: a caller that acts on them must wait for the promise to
 * resolve before trusting what it saw (`validate` collects problems and reports them only then).
 */
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

/**
 * Stream the entries of a snapshot, checking everything
 * {@link verifySnapshot} checks as it goes; the trailer is checked when the last entry has been handed
 * out, so a caller must consume to the end (or have verified first). With `expected`, throws at the
 * end when the file is not the one that was verified.
 */
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
  const verified = await scanSnapshot(path, (entry) => entries.push(entry), {
    ...options,
    onProfile: (profile) => profiles.push(profile),
  });
  return { header: verified.header, entries, sha256: verified.sha256, profiles };
}
