/**
 * What the other-writers e2e tests share: the snapshot they import (numbered connections of one custom
 * type, and optionally the scan profile `uses-last` naming the last of them), the other writer (a
 * connection created by hand, once the import is writing), and the report the import wrote.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { DEFAULT_SCAN_TEMPLATES, type RunningEmulator } from '../../src/emulator/index.js';
import type { Connection } from '../../src/model/connection.js';
import type { SnapshotScanProfile } from '../../src/model/scan-profile.js';
import { createSnapshotHeader } from '../../src/snapshot/format.js';
import { writeSnapshot } from '../../src/snapshot/write.js';
import { send } from '../emulator/raw-http.js';

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

/** Another writer: `name` created in `emu` by hand (a custom-type connection); the answer. */
export const byHand = (emu: RunningEmulator, name: string, description = 'made by hand') =>
  send(emu.url, 'POST', '/api/v1/ds_connections', {
    token: emu.token,
    body: { ds_connection: { name, type: 'custom-type', description } },
  });

/** Once the import is writing (the target was listed without it), someone creates `name`. */
export async function whenWriting(emu: RunningEmulator, name: string, description?: string): Promise<void> {
  await new Promise<void>((resolve) => {
    const poll = setInterval(() => {
      if (emu.record.creates.length > 0) {
        clearInterval(poll);
        resolve();
      }
    }, 5);
  });
  expect((await byHand(emu, name, description)).status).toBeLessThan(300);
}

/** A line of an import's `--report` file, as these tests read it. */
export type ReportLine = {
  object?: string;
  name: string;
  outcome: string;
  createdAt?: string;
  fields?: string[];
  reason?: string;
};

/** The lines of the `--report` file at `path`. */
export async function reportLines(path: string): Promise<ReportLine[]> {
  return (await readFile(path, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as ReportLine);
}
