/**
 * Undo of updates whose snapshot held secrets masked (an export's default): the PUT left them out, so
 * what the run wrote lacks them. A top-level secret the service kept (shown masked, or empty as before)
 * is no change since the run; a custom field's encrypted value set by someone after the run is (against
 * the emulator on 127.0.0.1, real HTTP).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { fixturesDir } from '../../src/paths.js';
import { send } from '../emulator/raw-http.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';

type Row = Record<string, unknown>;
const NAMES = ['finance-invoices-s3', 'finance-ap-archive-s3'];
let emulators: RunningEmulator[] = [];
afterEach(async () => {
  await Promise.all(emulators.map((e) => e.close()));
  emulators = [];
});

async function setUp() {
  const prod = JSON.parse(await readFile(join(fixturesDir(), 'environments', 'prod.json'), 'utf8')) as {
    connections: Row[];
  };
  const rows = prod.connections.filter((c) => NAMES.includes(String(c.name)));
  // The target's copies: described otherwise; finance-invoices-s3 with role auth and empty keys.
  const targetRows = rows.map((c) =>
    c.name === 'finance-invoices-s3'
      ? {
          ...c,
          description: 'target',
          isCredentialsAuth: false,
          isIamRoleAuth: true,
          aws_access_key: '',
          aws_secret_key: '',
        }
      : { ...c, description: 'target' },
  );
  const source = await startEmulator({ data: { connections: rows as never } });
  const target = await startEmulator({ data: { connections: targetRows as never } });
  emulators.push(source, target);
  const dir = await makeTempDir('undo-left-out-');
  const env = { DDS_SOURCE_TOKEN: source.token, DDS_TARGET_TOKEN: target.token };
  const snapshot = join(dir, 's.jsonl');
  expect((await runCli(['export', '--from', source.url, '-o', snapshot], { env })).exitCode).toBe(0);
  const journal = join(dir, 'j.jsonl');
  // No --overrides: the masked secrets are left out of each PUT.
  const imported = await runCli(
    ['import', snapshot, '--to', target.url, '--journal', journal, '--on-conflict', 'update'],
    { env },
  );
  expect(imported.exitCode, imported.stderr).toBe(0);
  expect(target.record.requests.filter((r) => r.method === 'PUT')).toHaveLength(2);
  return { target, env, journal };
}

describe('undo of updates that left masked secrets out', () => {
  it('puts both back when no one touched them since (a key kept empty, a custom value the service dropped)', async () => {
    const { target, env, journal } = await setUp();
    const undo = await runCli(['undo', journal], { env });
    expect(undo.exitCode, undo.stdout + undo.stderr).toBe(0);
    expect(undo.stdout).toMatch(/restored +2 /);
    for (const name of NAMES) expect(target.store.getConnection(name)?.description).toBe('target');
  });

  it('leaves one whose encrypted custom field someone set since: the undo would erase that value', async () => {
    const { target, env, journal } = await setUp();
    const now = target.store.getConnection('finance-ap-archive-s3') as unknown as Row;
    const fields = (now.custom_fields as Row[]).map((f) =>
      f.field_name === 'break_glass_pin' ? { ...f, field_value: 'SOMEONE-NEW' } : f,
    );
    const edit = await send(target.url, 'PUT', '/api/v1/ds_connections/finance-ap-archive-s3', {
      token: target.token,
      body: { ds_connection: { ...now, custom_fields: fields } },
    });
    expect(edit.status).toBeLessThan(300);
    const undo = await runCli(['undo', journal], { env });
    expect(undo.exitCode, undo.stdout + undo.stderr).toBe(1);
    expect(undo.stdout).toMatch(
      /left finance-ap-archive-s3: changed since the import updated it \(\/custom_fields\/break_glass_pin\/field_value/,
    );
    const after = (target.store.getConnection('finance-ap-archive-s3')?.custom_fields ?? []) as Row[];
    const pin = after.find((f) => f.field_name === 'break_glass_pin');
    expect(pin?.field_value).toBe('SOMEONE-NEW');
    expect(target.store.getConnection('finance-invoices-s3')?.description).toBe('target');
  });
});
