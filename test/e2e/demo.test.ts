import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { runDemo } from '../../src/demo/demo.js';
import { fixturesDir } from '../../src/paths.js';
import { clearRegisteredSecrets, isSecretFieldName } from '../../src/secrets.js';

function capture() {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

describe('npm run demo', () => {
  it('exports, validates, diffs, imports with overrides, and ends with every connection once, leaking no secret', async () => {
    const out = capture();
    const err = capture();
    const code = await runDemo({ stdout: out.stream, stderr: err.stream });
    const text = out.text() + err.text();
    expect(text).toMatch(/created exactly once: 65; missing: 0; duplicated: 0/);
    expect(text).toMatch(/POSTs sent by the re-run: 0/);
    expect(text).not.toMatch(/UNEXPECTED|this is a bug/);
    expect(code).toBe(0);

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
    clearRegisteredSecrets();
  }, 60_000);
});
