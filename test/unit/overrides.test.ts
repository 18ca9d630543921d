// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:NAME}" is a literal overrides placeholder, not a template
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputFileError } from '../../src/errors.js';
import {
  applyOverrides,
  checkOverrides,
  describeUnresolved,
  findOverrideRemovals,
  findUnusedOverrides,
  loadOverrides,
  resolveOverrides,
} from '../../src/importer/overrides.js';
import { checkEntryForSend, type EntryTemplates } from '../../src/importer/preflight.js';
import { clearRegisteredSecrets, scrub } from '../../src/secrets.js';

/** An overrides document checked as `loadOverrides` checks the file it read. */
const parseOverrides = (text: string, file: string) => checkOverrides(JSON.parse(text), file);

describe('parseOverrides', () => {
  it('reads all, byType and byName', async () => {
    const o = await parseOverrides(
      JSON.stringify({
        all: { scanner_group: 'dr' },
        byType: { s3: { aws_region: 'eu-west-1' } },
        byName: { a: { password: 'x' } },
      }),
      'o.json',
    );
    expect(o.byType.s3).toEqual({ aws_region: 'eu-west-1' });
  });
  it('refuses a bad file naming the pointer (exit 2)', async () => {
    await expect(parseOverrides('{"byName": {"a": 3}}', 'o.json')).rejects.toThrow(/\/byName\/a/);
    await expect(parseOverrides('{"bogus": {}}', 'o.json')).rejects.toThrow(/bogus/);
    await expect(parseOverrides('{"byName": {"a": {"name": "b"}}}', 'o.json')).rejects.toThrow(
      /\/byName\/a\/name/,
    );
    // A file that is not JSON at all is refused when it is read (`loadOverrides`).
    const dir = await mkdtemp(join(tmpdir(), 'dds-ovr-'));
    try {
      await writeFile(join(dir, 'o.json'), '{');
      await expect(loadOverrides(join(dir, 'o.json'))).rejects.toBeInstanceOf(InputFileError);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const error = await parseOverrides('[]', 'o.json').catch((e: unknown) => e);
    expect((error as InputFileError).exitCode).toBe(2);
  });
});

describe('resolveOverrides and applyOverrides', () => {
  it('applies all, then byType, then byName (later wins) and resolves ${env:..} as secrets', async () => {
    clearRegisteredSecrets();
    const o = await parseOverrides(
      JSON.stringify({
        all: { scanner_group: 'all', enabled: 'yes' },
        byType: { s3: { scanner_group: 'type' } },
        byName: { a: { scanner_group: 'name', password: '${env:A_PASSWORD}', note: 'x-${env:MISSING_VAR}' } },
      }),
      'o.json',
    );
    // MISSING_VAR is not set: its placeholder stays (asserted below), for the pre-flight to name.
    const overrides = resolveOverrides(o, { A_PASSWORD: 'canary-s3cr3t-value' });
    const a = applyOverrides({ name: 'a', type: 's3', scanner_group: 'orig' }, overrides);
    expect(a).toMatchObject({
      scanner_group: 'name',
      enabled: 'yes',
      password: 'canary-s3cr3t-value',
      note: 'x-${env:MISSING_VAR}',
    });
    expect(
      (applyOverrides({ name: 'b', type: 's3' }, overrides) as Record<string, unknown>).scanner_group,
    ).toBe('type');
    expect(
      (applyOverrides({ name: 'c', type: 'smb' }, overrides) as Record<string, unknown>).scanner_group,
    ).toBe('all');
    expect(scrub('said canary-s3cr3t-value')).toBe('said ******');
    expect(findUnusedOverrides(overrides, [{ name: 'b', type: 'smb' }])).toEqual(['byType/s3', 'byName/a']);
    clearRegisteredSecrets();
  });
});

describe('checkEntryForSend', () => {
  const templates: EntryTemplates = {
    checkEntry: (e) => ({
      errors: e.bucket_name === undefined ? [{ path: '/bucket_name', message: 'is required' }] : [],
      warnings: [
        { path: '/aws_secret_key', message: 'masked', kind: 'masked-secret' },
        { message: 'no schema for this type' },
      ].filter((w) => w.kind !== 'masked-secret' || e.aws_secret_key === '******'),
    }),
    requiredSecretFields: (type) => (type === 'rdb-mysql' ? ['password'] : []),
  };
  const prepared = (type: string, body: Record<string, unknown>) => ({
    name: 'n',
    type,
    sourceId: undefined,
    body: { name: 'n', type, ...body },
  });

  it('finds masked secrets, unresolved placeholders, empty required secrets and template errors', () => {
    const { problems, warnings } = checkEntryForSend(
      prepared('s3', { aws_secret_key: '******', custom_fields: [{ field_value: '${env:NOPE}' }] }),
      templates,
    );
    expect(problems.map((p) => p.path).sort()).toEqual([
      '/aws_secret_key',
      '/bucket_name',
      '/custom_fields/0/field_value',
    ]);
    expect(problems.find((p) => p.path === '/custom_fields/0/field_value')?.message).toMatch(
      /set the environment variable NOPE/,
    );
    expect(warnings.map((w) => w.message)).toEqual(['no schema for this type']);
    const mysql = checkEntryForSend(prepared('rdb-mysql', { bucket_name: 'b', password: '' }), templates);
    expect(mysql.problems).toEqual([
      expect.objectContaining({
        path: '/password',
        message: expect.stringMatching(/required secret is empty/),
      }),
    ]);
  });
  it('names a nested problem by its escaped JSON pointer, and only values with a problem', () => {
    const { problems } = checkEntryForSend(
      prepared('s3', {
        bucket_name: 'b',
        'odd/key~x': {
          list: ['fine', '******', { deep: '${env:NOPE_TOO}' }],
          other: 'text ${not a placeholder}',
        },
      }),
      templates,
    );
    expect(problems.map((p) => [p.path, p.message.slice(0, 20)])).toEqual([
      ['/odd~1key~0x/list/1', 'secret is masked ("*'],
      ['/odd~1key~0x/list/2/deep', 'unresolved placehold'],
    ]);
  });
  it('accepts an empty optional secret', () => {
    expect(
      checkEntryForSend(prepared('s3', { bucket_name: 'b', aws_secret_key: '' }), templates).problems,
    ).toEqual([]);
  });
});

describe('${file:PATH} placeholders', () => {
  it('reads a mounted secret relative to the overrides file, trimmed, registered as a secret', async () => {
    clearRegisteredSecrets();
    const dir = await mkdtemp(join(tmpdir(), 'dds-ovr-'));
    try {
      await mkdir(join(dir, 'secrets'));
      await writeFile(join(dir, 'secrets', 'db-pw'), '  canary-file-s3cr3t\n');
      await writeFile(
        join(dir, 'o.json'),
        JSON.stringify({ byName: { a: { password: '${file:secrets/db-pw}', key: '${file:nope.txt}' } } }),
      );
      // nope.txt cannot be read: its placeholder stays (asserted below), for the pre-flight to name.
      const overrides = resolveOverrides(await loadOverrides(join(dir, 'o.json')), {});
      const a = applyOverrides({ name: 'a', type: 's3' }, overrides) as Record<string, unknown>;
      expect(a.password).toBe('canary-file-s3cr3t');
      expect(a.key).toBe('${file:nope.txt}');
      expect(scrub('was canary-file-s3cr3t')).toBe('was ******');
    } finally {
      clearRegisteredSecrets();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses a malformed ${file:..} placeholder when the file is read (exit 2)', async () => {
    const error = await parseOverrides('{"all": {"password": "${file:pw"}}', 'o.json').catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InputFileError);
    expect((error as Error).message).toContain('/all/password: malformed ${file:PATH} placeholder');
  });

  it('the pre-flight names the unreadable file', () => {
    expect(describeUnresolved('${file:secrets/x}')).toBe(
      'make the file secrets/x readable (a ${file:PATH} placeholder)',
    );
    expect(describeUnresolved('${env:DB_PW}')).toBe('set the environment variable DB_PW');
  });
});

describe('custom_fields overrides', () => {
  const entry = {
    name: 'fin',
    type: 'rdb-mysql',
    custom_fields: [
      { field_name: 'cost_center', field_value: 'CC-12', field_type: 'clear' },
      { field_name: 'api_key', field_value: '******', field_type: 'encrypted' },
    ],
  };

  it('merges by field_name: the named element is replaced in place, the others are kept', async () => {
    const o = await parseOverrides(
      JSON.stringify({
        byName: {
          fin: {
            custom_fields: [
              { field_name: 'api_key', field_value: 'k-123', field_type: 'encrypted' },
              { field_name: 'region', field_value: 'eu', field_type: 'clear' },
            ],
          },
        },
      }),
      'o.json',
    );
    const out = applyOverrides(entry, o) as typeof entry;
    expect(out.custom_fields).toEqual([
      { field_name: 'cost_center', field_value: 'CC-12', field_type: 'clear' },
      { field_name: 'api_key', field_value: 'k-123', field_type: 'encrypted' },
      { field_name: 'region', field_value: 'eu', field_type: 'clear' },
    ]);
    expect(findOverrideRemovals(entry, o)).toEqual([]);
  });

  it('names what an override would remove', async () => {
    const o = await parseOverrides(
      JSON.stringify({
        all: { tags: ['b'], owners_v2: null, options: { keep: 1 } },
        byName: { fin: { custom_fields: [{ value: 'unnamed' }] } },
      }),
      'o.json',
    );
    const withMore = {
      ...entry,
      tags: ['a', 'b'],
      owners_v2: ['x@example.com'],
      options: { keep: 0, drop: 2 },
    };
    expect(findOverrideRemovals(withMore, o).sort()).toEqual([
      '/custom_fields/api_key',
      '/custom_fields/cost_center',
      '/options/drop',
      '/owners_v2',
      '/tags/0',
    ]);
  });
});
