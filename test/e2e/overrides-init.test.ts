// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:NAME}" is a literal overrides placeholder, not a template
/**
 * `overrides init` end to end: a masked export of the prod fixture, the skeleton written, its variables
 * set, and `import` passes the pre-flight with every secret in the right field of the target and the
 * clear custom fields kept.
 */
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type RunningEmulator, startEmulator } from '../../src/emulator/index.js';
import { fixturesDir } from '../../src/paths.js';
import { clearRegisteredSecrets, MASK } from '../../src/secrets.js';
import { runCli } from '../helpers/run-cli.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { targetReferences } from './import.helpers.js';

interface Variable {
  readonly variable: string;
  readonly entry: string;
  readonly field: string;
  readonly reason: string;
}
type CustomField = { field_name?: unknown; field_value?: unknown; field_type?: unknown };

describe('overrides init (end to end, against the emulator)', () => {
  let source: RunningEmulator;
  let dir: string;
  let snapshot: string;

  beforeAll(async () => {
    source = await startEmulator({ data: join(fixturesDir(), 'environments', 'prod.json') });
    dir = await makeTempDir('overrides-init-');
    snapshot = join(dir, 'prod.snapshot.jsonl');
    const exported = await runCli(['export', '--from', source.url, '-o', snapshot, '--no-progress'], {
      env: { DDS_SOURCE_TOKEN: source.token },
    });
    expect(exported.exitCode, exported.stderr).toBe(0);
  });
  afterAll(async () => {
    await source.close();
  });
  afterEach(() => clearRegisteredSecrets());

  /** The real value of a variable's field in the source. */
  function realValue(v: Variable): unknown {
    const real = source.store.getConnection(v.entry) as Record<string, unknown>;
    const custom = /^custom_fields\[(.*)\]$/.exec(v.field);
    if (custom) {
      return ((real.custom_fields ?? []) as CustomField[]).find((f) => f.field_name === custom[1])
        ?.field_value;
    }
    return real[v.field];
  }

  it('writes the skeleton, and with its variables set the import puts every secret in its field', async () => {
    const overrides = join(dir, 'dr-overrides.json');
    const init = await runCli(['overrides', 'init', snapshot, '-o', overrides, '--json'], { cwd: dir });
    expect(init.exitCode, init.stderr).toBe(0);
    const result = JSON.parse(init.stdout) as { variables: Variable[]; entriesWithSecrets: number };
    const variables = result.variables;
    expect(variables.length).toBeGreaterThan(20);
    expect(new Set(variables.map((v) => v.variable)).size, 'names are unique').toBe(variables.length);
    for (const v of variables) expect(v.variable).toMatch(/^DDS_[A-Z0-9_]+$/);
    expect(variables.some((v) => v.field.startsWith('custom_fields['))).toBe(true);
    expect((await stat(overrides)).mode & 0o777).toBe(0o600);

    // The text form lists the same names, one per line, in the same order (deterministic).
    const again = await runCli(['overrides', 'init', snapshot, '-o', join(dir, 'again.json')], { cwd: dir });
    expect(again.stdout.trim().split('\n')).toEqual(variables.map((v) => v.variable));

    const env: Record<string, string> = {};
    for (const v of variables) {
      const value = realValue(v);
      expect(typeof value, `${v.entry} ${v.field}`).toBe('string');
      env[v.variable] = value as string;
    }

    const target = await startEmulator({ data: { connections: [], ...targetReferences() } });
    try {
      const run = await runCli(
        ['import', snapshot, '--to', target.url, '--overrides', overrides, '--no-progress'],
        { env: { ...env, DDS_TARGET_TOKEN: target.token }, cwd: dir },
      );
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stderr).not.toMatch(/overrides remove/);
      for (const v of variables) {
        const stored = target.store.getConnection(v.entry) as Record<string, unknown>;
        const custom = /^custom_fields\[(.*)\]$/.exec(v.field);
        const value = custom
          ? ((stored.custom_fields ?? []) as CustomField[]).find((f) => f.field_name === custom[1])
              ?.field_value
          : stored[v.field];
        expect(value, `${v.entry} ${v.field}`).toBe(realValue(v));
      }
      // Clear custom fields are kept beside the supplied encrypted ones.
      let clear = 0;
      for (const c of source.store.connections as readonly Record<string, unknown>[]) {
        for (const f of (c.custom_fields ?? []) as CustomField[]) {
          if (f.field_type === 'encrypted') continue;
          const stored = target.store.getConnection(c.name as string) as Record<string, unknown>;
          const match = ((stored.custom_fields ?? []) as CustomField[]).find(
            (g) => g.field_name === f.field_name,
          );
          expect(match?.field_value, `${String(c.name)} ${String(f.field_name)}`).toBe(f.field_value);
          clear += 1;
        }
      }
      expect(clear).toBeGreaterThan(0);
    } finally {
      await target.close();
    }
  });

  it('without the variables the pre-flight names them (exit 3), and no value is masked in the file', async () => {
    const overrides = join(dir, 'unset.json');
    const init = await runCli(['overrides', 'init', snapshot, '-o', overrides, '--prefix', 'DR'], {
      cwd: dir,
    });
    expect(init.exitCode, init.stderr).toBe(0);
    const names = init.stdout.trim().split('\n');
    for (const n of names) expect(n).toMatch(/^DR_/);
    expect(await readFile(overrides, 'utf8')).not.toContain(MASK);
    const target = await startEmulator({ data: { connections: [], ...targetReferences() } });
    try {
      const run = await runCli(['import', snapshot, '--to', target.url, '--overrides', overrides], {
        env: { DDS_TARGET_TOKEN: target.token },
        cwd: dir,
      });
      expect(run.exitCode).toBe(3);
      expect(run.stderr).toContain(`set the environment variable ${names[0]}`);
    } finally {
      await target.close();
    }
  });

  it('refuses to overwrite an existing file without --force (exit 2, file untouched) and a bad --prefix', async () => {
    const existing = join(dir, 'existing.json');
    await writeFile(existing, '{"all":{}}\n');
    const refused = await runCli(['overrides', 'init', snapshot, '-o', existing], { cwd: dir });
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/already exists.*--force/);
    expect(await readFile(existing, 'utf8')).toBe('{"all":{}}\n');
    const forced = await runCli(['overrides', 'init', snapshot, '-o', existing, '--force'], { cwd: dir });
    expect(forced.exitCode, forced.stderr).toBe(0);
    expect(await readFile(existing, 'utf8')).toContain('${env:DDS_');
    const bad = await runCli(['overrides', 'init', snapshot, '-o', join(dir, 'x.json'), '--prefix', '9-x'], {
      cwd: dir,
    });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toMatch(/--prefix/);
  });
});
