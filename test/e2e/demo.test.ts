import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runDemo } from '../../src/demo/demo.js';
import { fixturesDir } from '../../src/paths.js';
import { clearRegisteredSecrets, isSecretFieldName } from '../../src/secrets.js';
import { makeTempDir } from '../helpers/temp-dir.js';

function capture() {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

describe('npm run demo', () => {
  // The demo makes its working folder under os.tmpdir(): point that at a folder of the test's own, so
  // the test sees exactly what the demo left behind (and the process-wide registry starts empty).
  let sandbox: string;
  beforeEach(async () => {
    sandbox = await makeTempDir('demo-tmpdir-');
    vi.stubEnv('TMPDIR', sandbox);
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    clearRegisteredSecrets();
  });

  it('prints each step, its result and where to look, ends on a complete verify (exit 0), leaking no secret', async () => {
    const out = capture();
    const err = capture();
    const code = await runDemo({ stdout: out.stream, stderr: err.stream });
    const text = out.text() + err.text();
    // The whole output is fixed but for ports and the time taken: each step, its result, where to look.
    const normalized = out
      .text()
      .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT')
      .replace(/finished in [\d.]+ s/, 'finished in N s');
    expect(normalized).toBe(await readFile(join(fixturesDir(), 'demo', 'expected.txt'), 'utf8'));
    expect(err.text()).toBe('');
    expect(code).toBe(0);
    // It ends on a complete verify, exit 0: the one-time profile is skipped by design, not missing.
    expect(text).toMatch(
      /-> exit 0: complete: 69 connections and 3 scan profiles present, 1 one-time profile skipped/,
    );
    // Each warning once; no block of variable names; no path of the folder it removes.
    expect(text.match(/no template schema for type "kafka"/g)).toHaveLength(1);
    expect(text).not.toMatch(/^DDS_[A-Z_]+$/m);
    expect(text).not.toContain(sandbox);
    expect(text).not.toMatch(/UNEXPECTED|this is a bug/);
    expect(text).toContain('$DEMO');
    expect(await readdir(sandbox), 'the demo left its folder behind').toEqual([]);

    // No secret of the production fixture (the values the demo puts in environment variables) is printed.
    const prod = JSON.parse(await readFile(join(fixturesDir(), 'environments', 'prod.json'), 'utf8')) as {
      connections: Record<string, unknown>[];
    };
    const secrets = new Set<string>();
    for (const c of prod.connections) {
      for (const [k, v] of Object.entries(c))
        if (isSecretFieldName(k) && typeof v === 'string' && v.length >= 6) secrets.add(v);
      for (const f of (c.custom_fields ?? []) as { field_type?: string; field_value?: unknown }[]) {
        if (f.field_type === 'encrypted' && typeof f.field_value === 'string' && f.field_value.length >= 6)
          secrets.add(f.field_value);
      }
    }
    expect(secrets.size).toBeGreaterThan(20);
    for (const s of secrets) expect(text, 'a demo secret leaked').not.toContain(s);
  }, 60_000);

  it('removes its folder and stops its emulators when a step fails', async () => {
    const out = capture();
    const err = capture();
    const controller = new AbortController();
    controller.abort();
    // Interrupted from the start: the export writes no snapshot and a later step cannot go on.
    const outcome = await runDemo({ stdout: out.stream, stderr: err.stream, signal: controller.signal }).then(
      (code) => ({ code }),
      (error: unknown) => ({ error }),
    );
    expect(outcome).not.toEqual({ code: 0 });
    expect(out.text()).toContain('$DEMO');
    expect(await readdir(sandbox), 'the demo left its folder behind').toEqual([]);
    const prodUrl = /prod: +(http:\/\/\S+)/.exec(out.text())?.[1];
    expect(prodUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    await expect(fetch(`${prodUrl}/api/v1/ds-connections`)).rejects.toThrow();
  }, 60_000);
});
