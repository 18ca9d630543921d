/**
 * Snapshot format 2: scan profile lines after the connections, round trip, and every damage refused
 * with the line named (exit 2), like version 1.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { InputFileError, PreflightError } from '../../src/errors.js';
import type { Connection } from '../../src/model/connection.js';
import type { SnapshotScanProfile } from '../../src/model/scan-profile.js';
import { hashEntryLines } from '../../src/snapshot/checksum.js';
import { createSnapshotHeader } from '../../src/snapshot/format.js';
import { indexSnapshot, loadSnapshot, readSnapshotEntries, verifySnapshot } from '../../src/snapshot/read.js';
import { writeSnapshot } from '../../src/snapshot/write.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let dir: string;
beforeEach(async () => {
  dir = await makeTempDir('snapshot-profiles-');
});

const header = createSnapshotHeader({
  tool: 'dds-migrate test',
  source: { url: 'https://prod.example.com', environment: 'prod' },
  include: ['connections', 'scanProfiles'],
  createdAt: new Date('2026-11-22T10:00:00.000Z'),
});

const connections: Connection[] = [
  { _id: 'c2', name: 'zeta', type: 's3' },
  { _id: 'c1', name: 'alpha', type: 'smb' },
] as Connection[];

const profiles: SnapshotScanProfile[] = [
  {
    scanProfile: {
      _id: 'p2',
      name: 'weekly',
      dataSourceList: ['c2', 'alpha'],
      scanTemplateId: 't',
      schedule: { timeZone: 'UTC', cronExpression: '0 3 * * 0' },
    },
    dataSourceNames: ['zeta', 'alpha'],
  },
  {
    scanProfile: {
      _id: 'p1',
      name: 'nightly',
      dataSourceList: ['c1'],
      scanTemplateId: 't',
      isSingleRunScan: true,
    },
    dataSourceNames: ['alpha'],
  },
];

async function writeV2(): Promise<string> {
  const path = join(dir, 'v2.snapshot.jsonl');
  await writeSnapshot({ path }, header, connections, { profiles: () => profiles });
  return path;
}

/** Replace the entry lines of a written snapshot and fix up the trailer (so only the change is wrong). */
async function rewrite(
  path: string,
  edit: (entries: string[]) => string[],
  fixTrailer = true,
): Promise<void> {
  const lines = (await readFile(path, 'utf8')).split('\n').slice(0, -1);
  const entries = edit(lines.slice(1, -1));
  const trailer = JSON.parse(lines.at(-1) as string);
  if (fixTrailer) {
    trailer.entryCount = entries.length;
    trailer.connectionCount = entries.filter((l) => !l.startsWith('{"scanProfile"')).length;
    trailer.scanProfileCount = entries.length - trailer.connectionCount;
    trailer.sha256 = hashEntryLines(entries);
  }
  await writeFile(path, `${[lines[0], ...entries, JSON.stringify(trailer)].join('\n')}\n`);
}

async function refusal(path: string): Promise<InputFileError> {
  const error = await verifySnapshot(path).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(InputFileError);
  return error as InputFileError;
}

describe('snapshot format 2: scan profiles', () => {
  it('writes connections then profiles, each sorted by name, counted and checksummed together', async () => {
    const path = await writeV2();
    const lines = (await readFile(path, 'utf8')).trim().split('\n');
    expect(JSON.parse(lines[0] as string)).toMatchObject({
      formatVersion: 2,
      include: ['connections', 'scanProfiles'],
    });
    expect(lines.slice(1, 3).map((l) => JSON.parse(l).name)).toEqual(['alpha', 'zeta']);
    expect(lines[3]).toBe(
      '{"scanProfile":{"_id":"p1","name":"nightly","dataSourceList":["c1"],"isSingleRunScan":true,"scanTemplateId":"t"},"dataSourceNames":["alpha"]}',
    );
    expect(JSON.parse(lines[4] as string).scanProfile.schedule).toEqual({
      cronExpression: '0 3 * * 0',
      timeZone: 'UTC',
    });
    expect(JSON.parse(lines[5] as string)).toEqual({
      kind: 'dds-migrate/snapshot-end',
      entryCount: 4,
      connectionCount: 2,
      scanProfileCount: 2,
      sha256: hashEntryLines(lines.slice(1, 5)),
    });
    const loaded = await loadSnapshot(path);
    expect(loaded.entries.map((e) => e.name)).toEqual(['alpha', 'zeta']);
    expect(loaded.profiles.map((p) => p.scanProfile.name)).toEqual(['nightly', 'weekly']);
    expect(loaded.profiles[1]?.dataSourceNames).toEqual(['zeta', 'alpha']);
    const verified = await verifySnapshot(path);
    expect([verified.entryCount, verified.scanProfileCount]).toEqual([2, 2]);
    // The connection stream never hands out a profile.
    const streamed: string[] = [];
    for await (const e of readSnapshotEntries(path)) streamed.push(e.name);
    expect(streamed).toEqual(['alpha', 'zeta']);
    const indexed = await indexSnapshot(path, () => undefined);
    indexed.file.close();
    expect(indexed.profiles).toHaveLength(2);
  });

  it('refuses duplicate profile names at export and leaves no file', async () => {
    const path = join(dir, 'dup.snapshot.jsonl');
    const twice = [profiles[0], profiles[0]] as SnapshotScanProfile[];
    const error = await writeSnapshot({ path }, header, connections, { profiles: () => twice }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PreflightError);
    expect((error as Error).message).toMatch(/"weekly": more than one scan profile has this name/);
    await expect(readFile(path)).rejects.toThrow();
  });

  it('refuses a connection line after a profile line, naming the line', async () => {
    const path = await writeV2();
    await rewrite(path, (e) => [e[0] as string, e[2] as string, e[1] as string, e[3] as string]);
    const error = await refusal(path);
    expect(error.line).toBe(4);
    expect(error.message).toMatch(/a connection line after the scan profiles \(line 3\)/);
  });

  it('refuses profiles out of name order and duplicate profile names', async () => {
    const path = await writeV2();
    await rewrite(path, (e) => [e[0] as string, e[1] as string, e[3] as string, e[2] as string]);
    expect((await refusal(path)).message).toMatch(
      /scan profiles are not sorted by name: "nightly" comes after "weekly"/,
    );
    const dup = await writeV2();
    await rewrite(dup, (e) => [e[0] as string, e[1] as string, e[2] as string, e[2] as string]);
    const error = await refusal(dup);
    expect(error.line).toBe(5);
    expect(error.message).toMatch(/duplicate scan profile name "nightly" \(also on line 4\)/);
  });

  it('refuses a malformed profile line (names list of the wrong length, no dataSourceList)', async () => {
    const path = await writeV2();
    await rewrite(path, (e) => [
      e[0] as string,
      e[1] as string,
      (e[2] as string).replace('"dataSourceNames":["alpha"]', '"dataSourceNames":["alpha","x"]'),
      e[3] as string,
    ]);
    const error = await refusal(path);
    expect(error.line).toBe(4);
    expect(error.message).toMatch(/"nightly": "dataSourceNames" has 2 elements, "dataSourceList" 1/);
  });

  it('refuses trailer counts that do not match, and an edited profile (sha256)', async () => {
    const path = await writeV2();
    const text = await readFile(path, 'utf8');
    await writeFile(
      path,
      text.replace('"connectionCount":2,"scanProfileCount":2', '"connectionCount":3,"scanProfileCount":1'),
    );
    expect((await refusal(path)).message).toMatch(/trailer connectionCount is 3 but the snapshot holds 2/);
    await writeFile(path, text.replace('"cronExpression":"0 3 * * 0"', '"cronExpression":"0 4 * * 0"'));
    expect((await refusal(path)).message).toMatch(/sha256 in the trailer does not match/);
  });

  it('refuses profile lines in a snapshot whose header does not include them', async () => {
    const path = await writeV2();
    const text = await readFile(path, 'utf8');
    await writeFile(
      path,
      text.replace('"include":["connections","scanProfiles"]', '"include":["connections"]'),
    );
    const error = await refusal(path);
    expect(error.line).toBe(4);
    expect(error.message).toMatch(/the header does not include "scanProfiles"/);
  });

  it('reads a version 1 snapshot: connections only, include ["connections"], a profile-like line refused', async () => {
    const path = join(dir, 'v1.snapshot.jsonl');
    const v1Header = { ...header, formatVersion: 1 } as Record<string, unknown>;
    delete v1Header.include;
    const entries = ['{"_id":"c1","name":"alpha","type":"smb"}'];
    const trailer = { kind: 'dds-migrate/snapshot-end', entryCount: 1, sha256: hashEntryLines(entries) };
    await writeFile(path, `${[JSON.stringify(v1Header), ...entries, JSON.stringify(trailer)].join('\n')}\n`);
    const loaded = await loadSnapshot(path);
    expect(loaded.header.include).toEqual(['connections']);
    expect(loaded.header.formatVersion).toBe(2);
    expect(loaded.profiles).toEqual([]);
    expect((await verifySnapshot(path)).storedFormatVersion).toBe(1);
    const withProfile = [...entries, '{"scanProfile":{"name":"x","dataSourceList":[]},"dataSourceNames":[]}'];
    await writeFile(
      path,
      `${[JSON.stringify(v1Header), ...withProfile, JSON.stringify({ ...trailer, entryCount: 2, sha256: hashEntryLines(withProfile) })].join('\n')}\n`,
    );
    const error = await refusal(path);
    expect(error.line).toBe(3);
    expect(error.message).toMatch(/no string "name"/);
  });
});
