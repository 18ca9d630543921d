/**
 * A snapshot file written line by line, as the writer lays it out (header, entries sorted by name,
 * trailer with the checksum), without the writer's spill file and fsyncs: for tests that write many
 * (property tests) or damage one on purpose.
 */
import { writeFile } from 'node:fs/promises';
import type { Connection } from '../../src/model/connection.js';
import { hashEntryLines } from '../../src/snapshot/checksum.js';

/** Options of {@link writeSnapshotFile}. */
export interface SnapshotFileOptions {
  /** 2 (default, current) or 1 (an older snapshot the reader migrates). */
  readonly formatVersion?: 1 | 2;
  /** Change the lines (header first, trailer last) before they are written: a damaged file. */
  readonly damage?: (lines: string[]) => void;
}

/** Write `entries` (sorted here by name, code-unit order) as a snapshot at `path`. */
export async function writeSnapshotFile(
  path: string,
  entries: readonly Connection[],
  options: SnapshotFileOptions = {},
): Promise<string> {
  const formatVersion = options.formatVersion ?? 2;
  const sorted = [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const lines = sorted.map((e) => JSON.stringify(e));
  const header = {
    kind: 'dds-migrate/snapshot',
    formatVersion,
    createdAt: '2026-01-01T00:00:00.000Z',
    tool: 'test',
    source: { url: 'https://a.invalid', environment: 'a' },
    selection: { ids: null, types: null, name: null },
    ...(formatVersion === 2 ? { include: ['connections'] } : {}),
  };
  const counts = formatVersion === 2 ? { connectionCount: lines.length, scanProfileCount: 0 } : {};
  const trailer = {
    kind: 'dds-migrate/snapshot-end',
    entryCount: lines.length,
    ...counts,
    sha256: hashEntryLines(lines),
  };
  const all = [JSON.stringify(header), ...lines, JSON.stringify(trailer)];
  options.damage?.(all);
  await writeFile(path, `${all.join('\n')}\n`);
  return path;
}
