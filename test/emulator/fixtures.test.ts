/** The shipped environments and the large-data generator. */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildFixtures } from '../../src/emulator/fixtures-gen.js';
import {
  type EmulatorSeed,
  generateConnections,
  listTemplateTypes,
  loadSeed,
  type RunningEmulator,
  startEmulator,
} from '../../src/emulator/index.js';
import { clientFor, obj } from './raw-http.js';

const DIR = new URL('../../fixtures/environments/', import.meta.url);

describe('environment fixtures', () => {
  let prod: EmulatorSeed;
  let dr: EmulatorSeed;
  beforeAll(async () => {
    prod = await loadSeed(new URL('prod.json', DIR).pathname);
    dr = await loadSeed(new URL('dr-partial.json', DIR).pathname);
  });

  it('are exactly what the generator builds (deterministic)', async () => {
    for (const [file, seed] of Object.entries(buildFixtures())) {
      const text = await readFile(new URL(file, DIR), 'utf8');
      expect(JSON.parse(text), file).toEqual(JSON.parse(JSON.stringify(seed)));
    }
  });

  it('prod: 60+ connections over every template type, 200+ cases, 3-5 profiles', () => {
    const connections = prod.connections ?? [];
    expect(connections.length).toBeGreaterThanOrEqual(60);
    const types = new Set(connections.map((c) => c.type));
    for (const t of listTemplateTypes()) expect(types).toContain(t);
    const cases = prod.cases ?? [];
    expect(cases.length).toBeGreaterThanOrEqual(200);
    expect(new Set(cases.map((c) => c.caseStatus))).toEqual(
      new Set(['open', 'acknowledged', 'silenced', 'resolved', 'remediated']),
    );
    expect(new Set(cases.map((c) => c.severityLevel))).toEqual(
      new Set(['critical', 'high', 'medium', 'low']),
    );
    expect(new Set(cases.map((c) => c.policyName)).size).toBeGreaterThanOrEqual(5);
    const profiles = prod.scanProfiles ?? [];
    expect(profiles.length).toBeGreaterThanOrEqual(3);
    expect(profiles.some((p) => p.isSingleRunScan === true)).toBe(true);
    expect(profiles.some((p) => p.schedule !== undefined)).toBe(true);
    const known = new Set(connections.flatMap((c) => [c._id, c.name]));
    for (const p of profiles) for (const ds of p.dataSourceList as string[]) expect(known).toContain(ds);
    expect(new Set(connections.map((c) => c._id)).size).toBe(connections.length);
    for (const c of connections) expect(c._id).toMatch(/^[0-9a-f]{24}$/);
  });

  it('prod: mixed-typed values and role-based s3 with empty keys', () => {
    const connections = prod.connections ?? [];
    expect(connections.some((c) => c.enabled === 'yes')).toBe(true);
    expect(connections.some((c) => c.enabled === true)).toBe(true);
    expect(connections.some((c) => c.security_tier === '1' || typeof c.security_tier === 'string')).toBe(
      true,
    );
    expect(connections.some((c) => c.is_ocr_enabled === 'false')).toBe(true);
    const role = connections.filter((c) => c.type === 's3' && c.isIamRoleAuth === true);
    expect(role.length).toBeGreaterThan(0);
    for (const c of role) expect([c.aws_access_key, c.aws_secret_key]).toEqual(['', '']);
  });

  it('dr-partial overlaps prod: shared names with other ids, changed values, missing and extra entries', () => {
    const prodByName = new Map((prod.connections ?? []).map((c) => [c.name, c]));
    const drConns = dr.connections ?? [];
    const shared = drConns.filter((c) => prodByName.has(c.name));
    expect(shared.length).toBeGreaterThan(20);
    expect(shared.every((c) => c._id !== prodByName.get(c.name)?._id)).toBe(true);
    expect(shared.some((c) => c.scanner_group !== prodByName.get(c.name)?.scanner_group)).toBe(true);
    expect(drConns.some((c) => !prodByName.has(c.name))).toBe(true);
    expect(prodByName.size - shared.length).toBeGreaterThan(10);
  });

  describe('served by the emulator', () => {
    let emu: RunningEmulator;
    let empty: RunningEmulator;
    beforeAll(async () => {
      emu = await startEmulator({ data: new URL('prod.json', DIR).pathname });
      empty = await startEmulator({ data: new URL('empty.json', DIR).pathname });
    });
    afterAll(async () => {
      await emu.close();
      await empty.close();
    });

    it('exports prod with every non-empty secret masked', async () => {
      const r = await clientFor(emu.url, emu.token).get('/api/v1/ds-connections/file-download/export');
      const exported = r.json as Array<Record<string, unknown>>;
      expect(exported).toHaveLength(prod.connections?.length ?? 0);
      const text = r.text;
      let checked = 0;
      for (const c of prod.connections ?? []) {
        for (const key of [
          'password',
          'aws_secret_key',
          'aws_access_key',
          'gcp_private_key',
          'security_token',
        ]) {
          const v = c[key];
          if (typeof v === 'string' && v !== '') {
            expect(text).not.toContain(JSON.stringify(v));
            checked += 1;
          }
        }
      }
      // The fixture must hold secrets for this to prove anything.
      expect(checked).toBeGreaterThan(10);
    });

    it('every prod connection (clear values) is accepted by a create on an empty environment', async () => {
      const api = clientFor(empty.url, empty.token);
      for (const c of prod.connections ?? []) {
        const r = await api.post('/api/v1/ds_connections', { ds_connection: c });
        expect(r.status, `${c.name}: ${r.text}`).toBe(200);
      }
      expect(empty.store.connections).toHaveLength(prod.connections?.length ?? 0);
    });

    it('serves prod cases and profiles', async () => {
      const api = clientFor(emu.url, emu.token);
      const cases = await api.get('/api/v1/actionable-insights/all-cases?limit=1000');
      expect(obj(cases).data.totalCount).toBe(prod.cases?.length);
      const profile = await api.get(`/api/v1/scanProfiles/${prod.scanProfiles?.[0]?._id}`);
      expect(profile.status).toBe(200);
    });
  });
});

describe('generateConnections', () => {
  it('is deterministic and produces unique names and 24-hex ids', () => {
    const a = generateConnections(500, { seed: 9 });
    expect(generateConnections(500, { seed: 9 })).toEqual(a);
    expect(new Set(a.map((c) => c.name)).size).toBe(500);
    expect(new Set(a.map((c) => c._id)).size).toBe(500);
    for (const c of a) expect(c._id).toMatch(/^[0-9a-f]{24}$/);
    expect(new Set(a.map((c) => c.type)).size).toBe(listTemplateTypes().length);
  });

  it('builds 100k connections (no timing assertion; the bench prints figures)', () => {
    const many = generateConnections(100_000, { seed: 1 });
    expect(many).toHaveLength(100_000);
    expect(many[99_999]?.name).toMatch(/-99999$/);
  });

  it('produces connections that a create accepts, and a large export streams', async () => {
    const connections = generateConnections(20_000, { seed: 5 });
    const emu = await startEmulator({ data: { connections } });
    try {
      const api = clientFor(emu.url, emu.token);
      const empty = await startEmulator();
      try {
        const target = clientFor(empty.url, empty.token);
        for (const c of connections.slice(0, 40)) {
          const r = await target.post('/api/v1/ds_connections', { ds_connection: c });
          expect(r.status, r.text).toBe(200);
        }
      } finally {
        await empty.close();
      }
      const r = await api.get('/api/v1/ds-connections/file-download/export');
      expect(r.headers['content-length']).toBeUndefined();
      expect((r.json as unknown[]).length).toBe(20_000);
    } finally {
      await emu.close();
    }
  });
});
