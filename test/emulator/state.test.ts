/** Conformance: `--state FILE` persists changes atomically and survives a restart. */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_SCAN_TEMPLATES, loadSeed, startEmulator } from '../../src/emulator/index.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { clientFor, obj, type RawResponse } from './raw-http.js';

describe('state persistence', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeTempDir('dds-emulator-');
  });

  const seed = {
    connections: [
      {
        name: 'seeded-sf',
        type: 'snowflake',
        account: 'acme',
        warehouse: 'WH',
        database: 'DB',
        username: 'u',
        password: 'Seed-Pass-1!',
      },
    ],
    cases: [{ id: 'c-1', caseStatus: 'open', policyName: 'PCI' }],
  };

  it('keeps creates, profiles and case changes across a restart', async () => {
    const statePath = join(dir, 'state', 'emu.json');
    const first = await startEmulator({ data: seed, statePath });
    let created: RawResponse;
    let profile: RawResponse;
    try {
      const api = clientFor(first.url, first.token);
      created = await api.post('/api/v1/ds_connections', {
        ds_connection: {
          name: 'later-pg',
          type: 'rdb-postgresql',
          rdb_url: 'pg:5432',
          rdb_name: 'd',
          username: 'u',
          password: 'Pg-Pass-2!',
        },
      });
      expect(created.status).toBe(200);
      profile = await api.post('/api/v1/scanProfiles', {
        name: 'Once',
        dataSourceList: [obj(created)._id],
        scanTemplateId: DEFAULT_SCAN_TEMPLATES[0]!._id,
        isSingleRunScan: true,
      });
      expect(profile.status).toBe(200);
      expect(
        (
          await api.patch('/api/v1/actionable-insights/case-status/c-1', {
            caseStatus: 'resolved',
            auditReason: 'done',
          })
        ).status,
      ).toBe(200);
    } finally {
      await first.close();
    }

    // Restart from the state file alone; the seed is not consulted when the state exists.
    const second = await startEmulator({ statePath, data: { connections: [] } });
    try {
      expect(second.store.connections.map((c) => c.name)).toEqual(['seeded-sf', 'later-pg']);
      expect(second.store.getConnection('later-pg')?.password).toBe('Pg-Pass-2!');
      expect(second.store.getConnection('later-pg')?._id).toBe(obj(created)._id);
      expect(second.store.getProfile(obj(profile)._id)?.name).toBe('Once');
      expect(second.store.scansStarted).toHaveLength(1);
      expect(second.store.getCase('c-1')?.caseStatus).toBe('resolved');
      expect(second.store.caseAudit[0]).toMatchObject({ caseId: 'c-1', reason: 'done' });
      const got = await clientFor(second.url, second.token).get(`/api/v1/scanProfiles/${obj(profile)._id}`);
      expect(got.status).toBe(200);
    } finally {
      await second.close();
    }
    // Written by rename: no temporary files left behind, and the file is a loadable seed.
    expect(await readdir(join(dir, 'state'))).toEqual(['emu.json']);
    expect((await loadSeed(statePath)).connections).toHaveLength(2);
  });

  it('has a create on disk before the socket is dropped (commit-then-drop)', async () => {
    const statePath = join(dir, 'emu.json');
    const emu = await startEmulator({ statePath, faults: 'commit-then-drop@POST:/ds_connections' });
    try {
      await expect(
        clientFor(emu.url, emu.token).post('/api/v1/ds_connections', {
          ds_connection: { name: 'on-disk', type: 'custom' },
        }),
      ).rejects.toThrow();
      const onDisk = JSON.parse(await readFile(statePath, 'utf8'));
      expect(onDisk.connections.map((c: { name: string }) => c.name)).toEqual(['on-disk']);
    } finally {
      await emu.close();
    }
  });

  it('refuses a seed file that is not JSON, naming the file', async () => {
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{ nope');
    await expect(startEmulator({ data: bad })).rejects.toThrow(/bad\.json/);
  });

  it('keeps updates, deletes, test outcomes, failures and references across a restart', async () => {
    const statePath = join(dir, 'changes.json');
    const data = {
      connections: [
        { name: 'k1', type: 'kafka', host: 'a', password: 'P-1', scanner_group: 'eu', credential_id: 'cr-1' },
        { name: 'k2', type: 'kafka', host: 'b' },
      ],
      connectionTestFailures: ['k1'],
    };
    const first = await startEmulator({ data, statePath });
    try {
      const api = clientFor(first.url, first.token);
      expect((await api.put('/api/v1/ds_connections/k1', { ds_connection: { host: 'a2' } })).status).toBe(
        200,
      );
      expect((await api.del('/api/v1/ds_connections/k2')).status).toBe(200);
      const t = await api.post('/api/v1/ds-connection-test', {
        ds_connection: { name: 'k1' },
        isNewPassword: false,
      });
      expect(obj(t).operationStatus).toBe('FAILED');
    } finally {
      await first.close();
    }
    const second = await startEmulator({ data: { connections: [] }, statePath });
    try {
      expect(second.store.connections.map((c) => c.name)).toEqual(['k1']);
      expect(second.store.getConnection('k1')).toMatchObject({
        host: 'a2',
        password: 'P-1',
        connectionStatusTest: { is_success: false },
      });
      expect(second.store.scanners.map((x) => x.scanner_group)).toEqual(['default', 'eu']);
      expect(second.store.credentials.map((x) => x.credential_id)).toEqual(['cr-1']);
      const api = clientFor(second.url, second.token);
      const t = await api.post('/api/v1/ds-connection-test', {
        ds_connection: { name: 'k1' },
        isNewPassword: false,
      });
      expect(obj(t).operationStatus).toBe('FAILED');
    } finally {
      await second.close();
    }
  });
});
