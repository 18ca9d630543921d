/**
 * The emulator's deployment switches, over raw HTTP (what a curl user sees), each from api-notes:
 * - `authRefusal: 200`: [seen] `GET /api/v1/ds-connections` with an invalid token answered `200`,
 *   `text/html; charset=utf-8`, `{"success":false,"message":"Failed to authenticate token."}`;
 * - `paging: 'offset'`: [code] BigID's SIEM connector pages all-cases with `limit` + `offset`;
 *   `none`: a deployment that honours neither (every page is the first);
 * - `caseIds: 'mongo'`: [docs] cases carry `_id` (the Mongo id the writes take) and `caseId` (sometimes
 *   a friendly `SPC-123`); `closed` is a status;
 * - `profileSources: 'names'`: [code] BigID's CI action lists data sources by name.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { buildEmulatorOptions } from '../../src/cli/emulator.js';
import { runCli } from '../../src/cli/run-cli.js';
import {
  DEFAULT_SCAN_TEMPLATES,
  generateCases,
  generateConnections,
  type RunningEmulator,
  startEmulator,
} from '../../src/emulator/index.js';
import { emulatorsClosedAfterEach } from '../helpers/emulators.js';
import { send } from './raw-http.js';

const emulator = emulatorsClosedAfterEach();

type Body = {
  data: { ds_connections?: { name: string }[]; cases?: Record<string, unknown>[]; totalCount: number };
};

describe('authRefusal', () => {
  it('200: a refused token is answered 200 text/html {"success":false,"message":"Failed to authenticate token."}', async () => {
    const emu = await emulator({ authRefusal: 200 });
    for (const path of [
      '/api/v1/ds-connections',
      '/api/v1/actionable-insights/all-cases',
      '/api/v1/scanProfiles',
    ]) {
      const r = await send(emu.url, 'GET', path, { auth: 'Bearer wrong' });
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(r.json).toEqual({ success: false, message: 'Failed to authenticate token.' });
    }
    const ok = await send(emu.url, 'GET', '/api/v1/ds-connections', { token: emu.token });
    expect(ok.headers['content-type']).toMatch(/^application\/json/);
    expect((ok.json as Body).data.totalCount).toBe(0);
  });

  it('401 by default (the spec)', async () => {
    const emu = await emulator({});
    const r = await send(emu.url, 'GET', '/api/v1/ds-connections', { auth: 'Bearer wrong' });
    expect(r.status).toBe(401);
  });
});

describe('paging', () => {
  const names = (r: { json: unknown }) => ((r.json as Body).data.ds_connections ?? []).map((c) => c.name);

  it('offset: the start is read from offset, skip is ignored', async () => {
    const emu = await emulator({
      paging: 'offset',
      data: { connections: generateConnections(12, { seed: 2 }) },
    });
    const all = names(await send(emu.url, 'GET', '/api/v1/ds-connections?limit=12', { token: emu.token }));
    const byOffset = await send(emu.url, 'GET', '/api/v1/ds-connections?limit=5&offset=5', {
      token: emu.token,
    });
    expect(names(byOffset)).toEqual(all.slice(5, 10));
    const bySkip = await send(emu.url, 'GET', '/api/v1/ds-connections?limit=5&skip=5', { token: emu.token });
    expect(names(bySkip)).toEqual(all.slice(0, 5));
    const cases = await send(emu.url, 'GET', '/api/v1/actionable-insights/all-cases?limit=2&offset=2', {
      token: emu.token,
    });
    expect(cases.status).toBe(200);
  });

  it('skip by default; none: every page is the first', async () => {
    const data = { cases: generateCases(6) };
    const bySkip = await emulator({ data });
    const page = (emu: RunningEmulator, q: string) =>
      send(emu.url, 'GET', `/api/v1/actionable-insights/all-cases?${q}`, { token: emu.token }).then((r) =>
        ((r.json as Body).data.cases ?? []).map((c) => c.caseId),
      );
    expect(await page(bySkip, 'limit=2&skip=2')).toEqual([
      'ca5e00000000000000000002',
      'ca5e00000000000000000003',
    ]);
    expect(await page(bySkip, 'limit=2&offset=2')).toEqual([
      'ca5e00000000000000000000',
      'ca5e00000000000000000001',
    ]);
    const none = await emulator({ data, paging: 'none' });
    expect(await page(none, 'limit=2&skip=2&offset=2')).toEqual(await page(none, 'limit=2'));
  });
});

describe('caseIds: mongo', () => {
  it('cases carry _id and a friendly caseId; the writes take the _id only; closed is a status', async () => {
    const emu = await emulator({ caseIds: 'mongo', data: { cases: generateCases(3) } });
    const r = await send(emu.url, 'GET', '/api/v1/actionable-insights/all-cases', { token: emu.token });
    const cases = (r.json as Body).data.cases ?? [];
    expect(cases.map((c) => [c._id, c.caseId, c.id])).toEqual([
      ['ca5e00000000000000000000', 'SPC-1', undefined],
      ['ca5e00000000000000000001', 'SPC-2', undefined],
      ['ca5e00000000000000000002', 'SPC-3', undefined],
    ]);
    const byFriendly = await send(emu.url, 'PATCH', '/api/v1/actionable-insights/case-status/SPC-2', {
      token: emu.token,
      body: { caseStatus: 'closed', auditReason: 'x' },
    });
    expect(byFriendly.status).toBe(404);
    const byMongo = await send(
      emu.url,
      'PATCH',
      '/api/v1/actionable-insights/case-status/ca5e00000000000000000001',
      {
        token: emu.token,
        body: { caseStatus: 'closed', auditReason: 'x' },
      },
    );
    expect(byMongo.status).toBe(200);
    expect(emu.store.getCase('ca5e00000000000000000001')?.caseStatus).toBe('closed');
    const filtered = await send(
      emu.url,
      'GET',
      `/api/v1/actionable-insights/all-cases?filter=${encodeURIComponent(JSON.stringify([{ field: 'caseId', value: ['SPC-3'], operator: 'in' }]))}&fields=caseStatus`,
      { token: emu.token },
    );
    expect((filtered.json as Body).data.cases).toEqual([
      { _id: 'ca5e00000000000000000002', caseId: 'SPC-3', caseStatus: emu.store.cases[2]?.caseStatus },
    ]);
  });

  it('a seed case with its own _id keeps its caseId and id as given', async () => {
    const emu = await emulator({
      data: { cases: [{ _id: '65f000000000000000000001', caseId: 'SPC-7', id: 'x-7' }] },
    });
    const r = await send(emu.url, 'GET', '/api/v1/actionable-insights/all-cases', { token: emu.token });
    expect((r.json as Body).data.cases).toEqual([
      { _id: '65f000000000000000000001', caseId: 'SPC-7', id: 'x-7', caseStatus: 'open' },
    ]);
  });
});

describe('profileSources: names', () => {
  it('listed and fetched profiles name their data sources; a stored name stays a name', async () => {
    const connections = generateConnections(2, { seed: 4 }).map((c, i) => ({
      ...c,
      _id: `ab${String(i).padStart(22, '0')}`,
    }));
    const [a, b] = connections as [(typeof connections)[number], (typeof connections)[number]];
    const emu = await emulator({
      profileSources: 'names',
      data: {
        connections,
        scanProfiles: [
          {
            _id: 'cd0000000000000000000001',
            name: 'p',
            dataSourceList: [a._id, b.name],
            scanTemplateId: DEFAULT_SCAN_TEMPLATES[0]?._id,
            schedule: { cronExpression: '0 2 * * *', timeZone: 'UTC' },
          },
        ],
      },
    });
    const list = await send(emu.url, 'GET', '/api/v1/scanProfiles', { token: emu.token });
    expect(
      (list.json as { scanProfiles: { dataSourceList: string[] }[] }).scanProfiles[0]?.dataSourceList,
    ).toEqual([a.name, b.name]);
    const one = await send(emu.url, 'GET', '/api/v1/scanProfiles/cd0000000000000000000001', {
      token: emu.token,
    });
    expect((one.json as { dataSourceList: string[] }).dataSourceList).toEqual([a.name, b.name]);
    // The store keeps what was written.
    expect(emu.store.profiles[0]?.dataSourceList).toEqual([a._id, b.name]);
  });
});

describe('the emulator command flags', () => {
  it('--auth-refusal 200 --paging offset --case-ids mongo --profile-sources names', () => {
    const options = buildEmulatorOptions(
      {
        authRefusal: '200',
        paging: 'offset',
        caseIds: 'mongo',
        profileSources: 'names',
      } as never,
      process.cwd(),
    );
    expect(options).toMatchObject({
      authRefusal: 200,
      paging: 'offset',
      caseIds: 'mongo',
      profileSources: 'names',
    });
  });

  it('refuses an unknown --auth-refusal with exit 2', async () => {
    let err = '';
    const stderr = new PassThrough();
    stderr.on('data', (c: Buffer) => {
      err += c.toString('utf8');
    });
    const code = await runCli(['emulator', '--auth-refusal', '403'], {
      stdout: new PassThrough(),
      stderr,
      env: {},
      cwd: process.cwd(),
    });
    expect(code).toBe(2);
    expect(err).toMatch(/auth-refusal/);
  });

  it('startEmulator refuses an unknown paging value', async () => {
    await expect(startEmulator({ paging: 'page' as never })).rejects.toThrow(
      /paging to be one of skip, offset, none/,
    );
  });
});
