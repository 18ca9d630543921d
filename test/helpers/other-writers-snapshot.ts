/**
 * The snapshot the other-writers e2e tests import: numbered connections of one custom type, and
 * optionally the scan profile `uses-last` naming the last of them.
 */
import { join } from 'node:path';
import { DEFAULT_SCAN_TEMPLATES } from '../../src/emulator/index.js';
import type { Connection } from '../../src/model/connection.js';
import type { SnapshotScanProfile } from '../../src/model/scan-profile.js';
import { createSnapshotHeader } from '../../src/snapshot/format.js';
import { writeSnapshot } from '../../src/snapshot/write.js';

/** `conn-00` .. `conn-NN`, ids starting with `idPrefix` (two hex digits, one per test file). */
export function numberedConnections(count: number, idPrefix: string): Connection[] {
  return Array.from(
    { length: count },
    (_, i) =>
      ({
        _id: `${idPrefix}${i.toString(16).padStart(22, '0')}`,
        name: `conn-${String(i).padStart(2, '0')}`,
        type: 'custom-type',
        description: `source ${i}`,
      }) as Connection,
  );
}

/** The scheduled profile `uses-last`, its `dataSourceList` naming `last`. */
export function profileNaming(last: Connection): SnapshotScanProfile {
  return {
    scanProfile: {
      _id: 'p-last',
      name: 'uses-last',
      dataSourceList: [last._id as string],
      scanTemplateId: DEFAULT_SCAN_TEMPLATES[0]?._id as string,
      schedule: { cronExpression: '0 2 * * *', timeZone: 'UTC' } as never,
    },
    dataSourceNames: [last.name],
  };
}

/** Write a snapshot of `connections` (and `profiles`) into `dir`; its path. */
export async function writeOtherWritersSnapshot(
  dir: string,
  connections: Connection[],
  profiles: SnapshotScanProfile[] = [],
): Promise<string> {
  const path = join(dir, 's.snapshot.jsonl');
  const header = createSnapshotHeader({
    tool: 'test',
    source: { url: 'https://prod.example.com', environment: 'prod' },
    include: ['connections', 'scanProfiles'],
  });
  await writeSnapshot({ path }, header, connections, { profiles: () => profiles });
  return path;
}
