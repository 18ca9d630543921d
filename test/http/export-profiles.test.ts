/**
 * `export` against a service that refuses the scan profile list (403) or lacks it (404): the
 * connections are still exported, the header says the profiles are not in the snapshot (so an import
 * neither creates nor prunes any), and a warning says why. Any other failure of the list stops the export.
 */
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import nock from 'nock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../src/snapshot/read.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const HOST = 'https://dds.profiles.test';
const EXPORT = '/api/v1/ds-connections/file-download/export';
const PROFILES = '/api/v1/scanProfiles';

let dir: string;
beforeEach(async () => {
  dir = await makeTempDir('dds-export-profiles-');
});
afterEach(() => {
  nock.cleanAll();
});

function exportTo(out: string) {
  return runCli(['export', '--from', HOST, '-o', out], {
    env: { DDS_SOURCE_TOKEN: 'tok-export-1' },
    cwd: dir,
  });
}

describe('export when the scan profile list is not available', () => {
  for (const status of [403, 404]) {
    it(`${status}: connections only, include says so, one warning`, async () => {
      nock(HOST).get(PROFILES).reply(status, { message: 'not for you' });
      nock(HOST)
        .get(EXPORT)
        .query(true)
        .reply(200, [{ _id: '65a100000000000000000001', name: 'alpha', type: 's3' }]);
      const out = join(dir, `s${status}.snapshot.jsonl`);
      const run = await exportTo(out);
      expect(run.exitCode).toBe(0);
      expect(run.stderr).toMatch(
        new RegExp(`scan profiles are not in the snapshot: GET /scanProfiles answered ${status}`),
      );
      const loaded = await loadSnapshot(out);
      expect(loaded.header.include).toEqual(['connections']);
      expect(loaded.entries.map((e) => e.name)).toEqual(['alpha']);
      expect(loaded.profiles).toEqual([]);
      expect(JSON.parse((await readFile(out, 'utf8')).trim().split('\n').at(-1) as string)).toMatchObject({
        connectionCount: 1,
        scanProfileCount: 0,
      });
    });
  }

  it('400: the export stops (exit 1) and writes no file', async () => {
    nock(HOST).get(PROFILES).reply(400, { message: 'bad request' });
    const out = join(dir, 'never.snapshot.jsonl');
    const run = await exportTo(out);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/GET \/api\/v1\/scanProfiles -> 400/);
    await expect(stat(out)).rejects.toThrow();
  });
});
