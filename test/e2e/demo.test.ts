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

  it('exports, validates, diffs, imports with overrides, ends with every connection once and a verified restore, leaking no secret', async () => {
    const out = capture();
    const err = capture();
    const code = await runDemo({ stdout: out.stream, stderr: err.stream });
    const text = out.text() + err.text();
    expect(text).toMatch(/created exactly once: 69; missing: 0; duplicated: 0/);
    expect(text).toMatch(/POSTs sent by the re-run: 0/);
    // It ends with a verify of the restore: complete, one test per connection, prod's failing sources known-bad.
    expect(text).toMatch(/: NOT COMPLETE\n {2}connections: {3}69 present, 0 different, 0 missing, 0 extra\n/);
    expect(text).toMatch(/ {2}scan profiles: 3 present, 0 different, 1 missing, 0 extra\n/);
    expect(text).toMatch(
      /- scan profile .+: one-time profile \(isSingleRunScan\): import skips it without --allow-run/,
    );
    expect(text).toMatch(/tests: +62 passed, 0 regression, 7 known-bad/);
    expect(text).toMatch(/connection tests sent: 69 \(one per connection\)/);
    expect(text).not.toMatch(/UNEXPECTED|this is a bug/);
    expect(code).toBe(0);
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
