/** Conformance: scanners and stored credentials a connection refers to (api-notes: [code] scanner-status, [guess] credentials). */
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import type { EmulatorOptions } from '../../src/emulator/types.js';
import { clientFor, obj } from './raw-http.js';

const connections = [
  { name: 'a', type: 'kafka', scanner_group: 'eu-scanners', credential_id: 'cred-eu' },
  { name: 'b', type: 'kafka', scanner_group: 'eu-scanners' },
  { name: 'c', type: 'kafka', credential_id: 'cred-us' },
];

describe('references', () => {
  let emu: RunningEmulator;
  let api: ReturnType<typeof clientFor>;
  const start = async (options: EmulatorOptions) => {
    emu = await startEmulator(options);
    api = clientFor(emu.url, emu.token);
  };
  afterEach(() => emu.close());

  it('defaults: a scanner for every scanner_group in use plus "default", a credential for every credential_id', async () => {
    await start({ data: { connections } });
    const s = await api.get('/api/v1/scanner-status');
    expect(s.status).toBe(200);
    const groups = obj(s)
      .data.scanners.map((x: { scanner_group: string }) => x.scanner_group)
      .sort();
    expect(groups).toEqual(['default', 'eu-scanners']);
    expect(obj(s).scanners).toEqual(obj(s).data.scanners);
    expect(obj(s).data.scanners[0]).toEqual({
      name: expect.any(String),
      scanner_group: 'default',
      status: 'online',
    });
    const c = await api.get('/api/v1/credentials');
    expect(c.status).toBe(200);
    expect(
      obj(c)
        .data.credentials.map((x: { credential_id: string }) => x.credential_id)
        .sort(),
    ).toEqual(['cred-eu', 'cred-us']);
    expect(obj(c).credentials).toEqual(obj(c).data.credentials);
  });

  it('serves the seed lists as given, secrets masked', async () => {
    await start({
      data: {
        connections,
        scanners: [{ name: 's1', scanner_group: 'dmz', status: 'offline' }],
        credentials: [{ credential_id: 'vault-1', username: 'svc', password: 'Clear-1!' }],
      },
    });
    expect(obj(await api.get('/api/v1/scanner-status')).data.scanners).toEqual([
      { name: 's1', scanner_group: 'dmz', status: 'offline' },
    ]);
    const creds = obj(await api.get('/api/v1/credentials')).data.credentials;
    expect(creds).toEqual([{ credential_id: 'vault-1', username: 'svc', password: '******' }]);
    expect(emu.store.credentials[0]!.password).toBe('Clear-1!');
  });

  it('answers 404 for both with referencesApi: false, as deployments that lack them', async () => {
    await start({ data: { connections }, referencesApi: false });
    expect((await api.get('/api/v1/scanner-status')).status).toBe(404);
    expect((await api.get('/api/v1/credentials')).status).toBe(404);
  });

  it('refuses a malformed scanners entry in the seed', async () => {
    await expect(startEmulator({ data: { scanners: [{ name: 'x' } as never] } })).rejects.toThrow(
      /scanners\[0\]/,
    );
    await start({});
  });
});
