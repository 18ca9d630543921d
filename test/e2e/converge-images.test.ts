/**
 * The before-images file of a converging import (`<journal>.<pid>-<hex>.images.tmp`, see
 * src/importer/image-spill.ts) exists only while the run holds the journal's lock: it is removed
 * before the lock is released, so a next run that takes the lock never meets it. Real HTTP against
 * the emulator; `unlinkSync` observed to see the lock at the moment the file goes.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it, vi } from 'vitest';

const removals: { path: string; lockHeld: boolean }[] = [];
let lockPath = '';
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const unlinkSync = (path: string) => {
    if (String(path).endsWith('.images.tmp'))
      removals.push({ path: String(path), lockHeld: fs.existsSync(lockPath) });
    return fs.unlinkSync(path);
  };
  return { ...fs, default: { ...fs, unlinkSync }, unlinkSync };
});

import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import type { Connection } from '../../src/model/connection.js';
import { clearRegisteredSecrets, MASK } from '../../src/secrets.js';
import { runCli } from '../helpers/run-cli.js';
import { writeSnapshotFile } from '../helpers/snapshot-file.js';
import { makeTempDir } from '../helpers/temp-dir.js';

let target: RunningEmulator | undefined;
afterEach(async () => {
  await target?.close();
  clearRegisteredSecrets();
});

const conn = (i: number, description: string) => ({
  name: `c-${String(i).padStart(3, '0')}`,
  type: 's3',
  enabled: 'yes',
  description,
  bucket_name: 'b',
  aws_region: 'eu-central-1',
  isCredentialsAuth: true,
  isIamRoleAuth: false,
  aws_access_key: 'AKIA5A3F00EXAMPLE0',
  aws_secret_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYFinance0KEY',
});

it('a converging run writes its before-images to a file of its own and removes it while it still holds the lock', async () => {
  // 30 connections with 60 KB descriptions: about 1.8 MB of before-images, so a block is written.
  const rows = Array.from({ length: 30 }, (_, i) => conn(i, 'old '.repeat(15_000)));
  target = await startEmulator({ data: { connections: rows as never } });
  const dir = await makeTempDir('dds-images-');
  const snapshot = await writeSnapshotFile(
    join(dir, 's.jsonl'),
    rows.map((r) => ({
      ...r,
      description: 'new',
      aws_access_key: MASK,
      aws_secret_key: MASK,
    })) as Connection[],
  );
  const journal = join(dir, 'j.jsonl');
  lockPath = `${journal}.lock`;
  const run = await runCli(
    [
      'import',
      snapshot,
      '--to',
      target.url,
      '--journal',
      journal,
      '--on-conflict',
      'update',
      '--no-progress',
    ],
    { env: { DDS_TARGET_TOKEN: target.token } },
  );
  expect(run.exitCode, run.stderr).toBe(0);
  expect(run.stdout).toMatch(/updated\s+30/);
  expect(removals).toHaveLength(1);
  expect(removals[0]?.path).toMatch(/j\.jsonl\.\d+-[0-9a-f]{8}\.images\.tmp$/);
  expect(removals[0]?.lockHeld).toBe(true);
  expect(readdirSync(dir).filter((n) => n.endsWith('.images.tmp'))).toEqual([]);
  expect(existsSync(lockPath)).toBe(false);
  // The journal's update intents hold the before-images read back from the file.
  const { readFile } = await import('node:fs/promises');
  const intents = (await readFile(journal, 'utf8'))
    .split('\n')
    .filter((l) => l.includes('"kind":"intent"'))
    .map((l) => JSON.parse(l) as { op: string; before: { description: string; aws_secret_key: string } });
  expect(intents).toHaveLength(30);
  for (const intent of intents) {
    expect(intent.op).toBe('update');
    expect(intent.before.description).toBe('old '.repeat(15_000));
    expect(intent.before.aws_secret_key).toBe(MASK);
  }
});
