import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { HttpClient, HttpRequest } from '../../src/api/http.js';
import { generateConnections } from '../../src/emulator/generate.js';
import { CONNECTOR_TEMPLATES } from '../../src/emulator/templates.js';
import { ApiError, InputFileError, UsageError } from '../../src/errors.js';
import type { Connection } from '../../src/model/connection.js';
import type { ConnectorTemplate } from '../../src/model/template.js';
import { fixturesDir } from '../../src/paths.js';
import { createAjv } from '../../src/schema/ajv.js';
import {
  loadCatalogOfTemplates,
  loadShippedCatalog,
  shippedConnectionSchemaPath,
  shippedTemplatesDir,
} from '../../src/schema/catalog.js';
import { convertTemplate, looseEnum } from '../../src/schema/template-schema.js';
import { loadCatalogFromEnvironment } from '../../src/validate/target-catalog.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** The emulator's templates, seen through the client's (index-signature) type. */
const templates = Object.values(CONNECTOR_TEMPLATES) as unknown as ConnectorTemplate[];
/** The evidenced types (recorded sandbox, api-notes) plus snowflake (a guess, said in its $comment). */
const SHIPPED_TYPES = [
  's3',
  'snowflake',
  'rdb-mysql',
  'rdb-postgresql',
  'rdb-mssql',
  'rdb-oracle',
  'mongodb',
  'smb',
  'salesforce',
  'googledrive',
  'generic-rest-api',
];

const RECORDED = join(fixturesDir(), 'recorded', 'sandbox-ds-connections', 'ds-connections.json');

async function readRecorded(): Promise<Connection[]> {
  const body = JSON.parse(await readFile(RECORDED, 'utf8')) as { data: { ds_connections: Connection[] } };
  return body.data.ds_connections;
}

function propertiesOf(schema: Record<string, unknown>): Record<string, Record<string, unknown>> {
  return schema.properties as Record<string, Record<string, unknown>>;
}

describe('convertTemplate (emulator templates)', () => {
  it.each(templates.map((t) => [t.name, t] as const))(
    '%s: mandatory -> required, password -> x-secret, options -> enum',
    (_, template) => {
      const { schema } = convertTemplate(template);
      const props = propertiesOf(schema);
      const mandatory = template.fields.filter((f) => f.mandatory).map((f) => f.apiName);
      expect([...(schema.required as string[])].sort()).toEqual(
        [...new Set(['name', 'type', ...mandatory])].sort(),
      );
      const secrets = Object.entries(props)
        .filter(([, p]) => p['x-secret'] === true)
        .map(([k]) => k)
        .sort();
      expect(secrets).toEqual(
        template.fields
          .filter((f) => f.type === 'password')
          .map((f) => f.apiName)
          .sort(),
      );
      for (const field of template.fields) {
        expect(props[field.apiName]).toBeDefined();
        for (const option of (field.options ?? []) as { value: string }[]) {
          expect(props[field.apiName]?.enum).toContain(option.value);
        }
      }
      expect(schema.additionalProperties).toBeUndefined();
      expect(props.type).toEqual({ type: 'string', const: template.name });
    },
  );

  it('keeps each validation errorText and applies the regex to non-empty values only', async () => {
    const template: ConnectorTemplate = {
      name: 'x',
      fields: [
        {
          apiName: 'host',
          type: 'string',
          mandatory: false,
          validation: [
            { regex: '^\\S+$', errorText: 'no spaces' },
            { regex: '^[a-z.]+$', errorText: 'lower case' },
          ],
        },
      ],
    };
    const catalog = await loadCatalogOfTemplates([template]);
    const check = (host: unknown) =>
      catalog.checkEntry({ name: 'n', type: 'x', host }).errors.map((e) => [e.path, e.message]);
    expect(check('')).toEqual([]);
    expect(check(null)).toEqual([]);
    expect(check('ok.host')).toEqual([]);
    expect(check('Bad Host')).toEqual([
      ['/host', 'no spaces'],
      ['/host', 'lower case'],
    ]);
  });

  it('leaves out a regex JavaScript cannot compile, with a catalog warning', async () => {
    const catalog = await loadCatalogOfTemplates([
      {
        name: 'x',
        fields: [{ apiName: 'a', type: 'string', validation: [{ regex: '([a-z', errorText: 'x' }] }],
      },
    ]);
    expect(catalog.warnings).toEqual([expect.stringMatching(/field a: regex .* is not valid/)]);
    expect(catalog.checkEntry({ name: 'n', type: 'x', a: '((' }).errors).toEqual([]);
  });

  it('accepts template regexes written without the u flag in mind', async () => {
    const catalog = await loadCatalogOfTemplates([
      {
        name: 'x',
        fields: [{ apiName: 'a', type: 'string', validation: [{ regex: '^[\\w\\:]+$', errorText: 'bad' }] }],
      },
    ]);
    expect(catalog.checkEntry({ name: 'n', type: 'x', a: 'a:b' }).errors).toEqual([]);
    expect(catalog.checkEntry({ name: 'n', type: 'x', a: 'a b' }).errors).toHaveLength(1);
  });

  it('loose enums accept the other spelling real exports use', () => {
    expect(looseEnum(['yes', 'no'])).toEqual(['yes', true, 'no', false]);
    expect(looseEnum(['1', 2])).toEqual(['1', 1, 2, '2']);
    expect(looseEnum([true])).toEqual([true, 'true']);
  });
});

describe('catalog built from the emulator templates', () => {
  let catalog: Awaited<ReturnType<typeof loadCatalogOfTemplates>>;
  beforeAll(async () => {
    catalog = await loadCatalogOfTemplates(templates);
  });

  it('finds every generated connection valid', () => {
    for (const entry of generateConnections(200, { seed: 3 })) {
      expect(catalog.checkEntry(entry as unknown as Connection).errors).toEqual([]);
    }
  });

  it('finds every recorded real connection valid (real field names, stored credentials, mixed types)', async () => {
    for (const entry of await readRecorded()) {
      expect(catalog.checkEntry(entry).errors, entry.name).toEqual([]);
    }
  });

  it('reports a missing mandatory field with its pointer', () => {
    const [entry] = generateConnections(1, { seed: 3, types: ['smb'] }) as unknown as Connection[];
    const { sharedResource: _s, ...rest } = entry as Connection;
    expect(catalog.checkEntry(rest as Connection).errors).toEqual([
      { kind: 'schema', entry: rest.name, type: 'smb', path: '/sharedResource', message: 'is required' },
    ]);
  });

  it('knows secrets and required secrets', async () => {
    expect([...catalog.secretFields('s3')].sort()).toEqual([
      'aws_access_key',
      'aws_secret_key',
      'aws_session_token',
    ]);
    expect([...catalog.secretFields('googledrive')]).toEqual(['google_service_account_json']);
    expect(catalog.requiredSecretFields('s3')).toEqual([]);
    // A stored credential can stand in for the password: never required (api-notes).
    expect(catalog.requiredSecretFields('rdb-mysql')).toEqual([]);
    expect(catalog.requiredSecretFields('mongodb')).toEqual([]);
    const strict = await loadCatalogOfTemplates([
      { name: 'x', fields: [{ apiName: 'password', type: 'password', mandatory: true }] },
    ]);
    expect(strict.requiredSecretFields('x')).toEqual(['password']);
    expect(catalog.requiredFields('kafka')).toEqual(['name', 'type']);
    expect(catalog.secretFields('kafka').size).toBe(0);
  });

  it('tags masked secrets so import can turn them into errors', () => {
    const report = catalog.checkEntry({
      name: 'n',
      type: 'rdb-mysql',
      rdb_url: 'h:1',
      rdb_name: 'd',
      username: 'u',
      password: '******',
    });
    expect(report.errors).toEqual([]);
    expect(report.warnings.map((w) => [w.path, w.kind === 'masked-secret'])).toEqual([['/password', true]]);
  });
});

describe('shipped schemas/templates', () => {
  it('are each a valid JSON Schema 2020-12 (the catalog does not check them against the meta-schema at run time)', async () => {
    const ajv = createAjv();
    const files = [
      ...(await readdir(shippedTemplatesDir())).map((f) => join(shippedTemplatesDir(), f)),
      shippedConnectionSchemaPath(),
    ];
    expect(files.length).toBe(SHIPPED_TYPES.length + 1);
    for (const file of files) {
      const schema = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
      expect({ file, valid: ajv.validateSchema(schema), errors: ajv.errors ?? null }).toEqual({
        file,
        valid: true,
        errors: null,
      });
    }
  });

  it('ship the evidenced types; each names its evidence and states no invented enum or pattern', async () => {
    const shipped = await loadShippedCatalog();
    expect(shipped.types()).toEqual([...SHIPPED_TYPES].sort());
    for (const type of SHIPPED_TYPES) {
      const file = JSON.parse(
        await readFile(join(shippedTemplatesDir(), `${type}.schema.json`), 'utf8'),
      ) as Record<string, unknown>;
      expect(file.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(file.$comment, type).toMatch(type === 'snowflake' ? /GUESS/ : /JupiterOne\/graph-bigid/);
      for (const [key, prop] of Object.entries(propertiesOf(file))) {
        expect(prop.enum, `${type}.${key}`).toBeUndefined();
        if (key !== 'name') expect(prop.pattern, `${type}.${key}`).toBeUndefined();
      }
    }
  });

  it('agree with the emulator templates on required and x-secret (both read the same evidence)', async () => {
    const shipped = await loadShippedCatalog();
    for (const template of templates.filter((t) => SHIPPED_TYPES.includes(t.name))) {
      const built = await loadCatalogOfTemplates([template]);
      expect([...shipped.requiredFields(template.name)].sort(), template.name).toEqual(
        [...built.requiredFields(template.name)].sort(),
      );
      expect([...shipped.secretFields(template.name)].sort(), template.name).toEqual(
        [...built.secretFields(template.name)].sort(),
      );
    }
  });

  it('find every recorded real connection valid, with no masked-secret error', async () => {
    const shipped = await loadShippedCatalog();
    for (const entry of await readRecorded()) {
      expect(shipped.checkEntry(entry).errors, entry.name).toEqual([]);
    }
  });

  it('find every generated connection valid, as the built catalog does', async () => {
    const shipped = await loadShippedCatalog();
    for (const entry of generateConnections(100, { seed: 11 })) {
      expect(shipped.checkEntry(entry as unknown as Connection).errors).toEqual([]);
    }
  });

  it('still refuse what evidence says every source has: an smb entry without smbServer', async () => {
    const shipped = await loadShippedCatalog();
    const report = shipped.checkEntry({ name: 'Share', type: 'smb', sharedResource: 'Public' });
    expect(report.errors.map((e) => e.path)).toEqual(['/smbServer']);
  });
});

describe('live templates with odd parts', () => {
  it('map a field kind this build does not know to any JSON value, with a warning', async () => {
    const catalog = await loadCatalogOfTemplates([
      {
        name: 'x',
        fields: [
          { apiName: 'owners_v2', type: 'ownersPicker', mandatory: false },
          { apiName: 'custom_fields', type: 'customFieldsEditor' },
          { apiName: 'awsAuthStrategy', type: 'select' },
        ],
      },
    ]);
    expect(catalog.warnings).toHaveLength(3);
    expect(catalog.warnings[0]).toMatch(
      /field owners_v2: kind "ownersPicker" is not known; any value accepted/,
    );
    const entry = {
      name: 'n',
      type: 'x',
      owners_v2: [{ id: 'a@example.com', type: 'it', isNotified: true }],
      custom_fields: [{ field_name: 'f', field_value: 'v', field_type: 'clear' }],
      awsAuthStrategy: 4,
    };
    expect(catalog.checkEntry(entry).errors).toEqual([]);
  });

  it('key fields by apiName, never by name', async () => {
    const catalog = await loadCatalogOfTemplates([
      {
        name: 'smb',
        fields: [{ apiName: 'smbServer', name: 'serverName', type: 'string', mandatory: true }],
      },
    ]);
    expect(catalog.checkEntry({ name: 'n', type: 'smb', smbServer: 'h' }).errors).toEqual([]);
    expect(catalog.checkEntry({ name: 'n', type: 'smb', serverName: 'h' }).errors.map((e) => e.path)).toEqual(
      ['/smbServer'],
    );
  });

  it('degrade fields without apiName, non-object fields and non-array options/validation to warnings', async () => {
    const catalog = await loadCatalogOfTemplates([
      {
        name: 'x',
        fields: [
          'not a field',
          { name: 'noApiName', type: 'string', mandatory: true },
          {
            apiName: 'a',
            type: 'string',
            options: 'yes,no',
            validation: { regex: '^x$' },
            mandatory: 'true',
          },
        ] as unknown as ConnectorTemplate['fields'],
      },
    ]);
    expect(catalog.warnings).toEqual([
      expect.stringMatching(/fields\[0\] is not an object; ignored/),
      expect.stringMatching(/fields\[1\] has no apiName; ignored/),
      expect.stringMatching(/field a: options is not an array/),
      expect.stringMatching(/field a: validation is not an array/),
      expect.stringMatching(/field a: mandatory is "true", not a boolean; treated as optional/),
    ]);
    expect(catalog.checkEntry({ name: 'n', type: 'x', a: 'anything' }).errors).toEqual([]);
    expect(catalog.checkEntry({ name: 'n', type: 'x' }).errors).toEqual([]);
  });

  it('accept mixed scalar types in string fields ("1" and 1), refuse an empty mandatory string', async () => {
    const catalog = await loadCatalogOfTemplates([
      {
        name: 'x',
        fields: [
          { apiName: 'tier', type: 'string' },
          { apiName: 'url', type: 'string', mandatory: true },
        ],
      },
    ]);
    expect(catalog.checkEntry({ name: 'n', type: 'x', tier: 1, url: 'h' }).errors).toEqual([]);
    expect(
      catalog.checkEntry({ name: 'n', type: 'x', tier: '1', url: '' }).errors.map((e) => e.path),
    ).toEqual(['/url']);
  });
});

describe('--schemas DIR', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeTempDir('dds-schemas-');
  });

  it('reads <type>.schema.json files, falling back to the shipped generic schema', async () => {
    await writeFile(
      join(dir, 'kafka.schema.json'),
      JSON.stringify({
        type: 'object',
        required: ['name', 'type', 'bootstrap_servers'],
        properties: { sasl_password: { type: 'string', 'x-secret': true } },
      }),
    );
    const catalog = await loadShippedCatalog(dir);
    expect(catalog.types()).toEqual(['kafka']);
    expect([...catalog.secretFields('kafka')]).toEqual(['sasl_password']);
    expect(catalog.checkEntry({ name: 'k', type: 'kafka' }).errors.map((e) => e.path)).toEqual([
      '/bootstrap_servers',
    ]);
    const unknown = catalog.checkEntry({ name: 'bad/name', type: 's3' });
    expect(unknown.errors.map((e) => e.path)).toEqual(['/name']);
    expect(unknown.warnings.map((w) => w.kind)).toEqual(['unknown-type']);
  });

  it('refuses a schema file that is not JSON (exit 2) and a missing folder', async () => {
    const bad = await makeTempDir('dds-schemas-bad-');
    await writeFile(join(bad, 's3.schema.json'), '{ not json');
    await expect(loadShippedCatalog(bad)).rejects.toBeInstanceOf(InputFileError);
    await expect(loadShippedCatalog(join(dir, 'nope'))).rejects.toBeInstanceOf(UsageError);
  });

  it('still checks a schema of its own against the meta-schema: one that is not a JSON Schema is named', async () => {
    const broken = await makeTempDir('dds-schemas-broken-');
    // Only the meta-schema refuses this one (ajv compiles a negative minProperties without a word).
    await writeFile(join(broken, 'kafka.schema.json'), JSON.stringify({ type: 'object', minProperties: -1 }));
    const catalog = await loadShippedCatalog(broken);
    expect(() => catalog.checkEntry({ name: 'k', type: 'kafka' })).toThrow(/not a valid JSON Schema/);
  });
});

describe('loadCatalogFromEnvironment', () => {
  it('asks for each type once; a type the environment does not know gets the generic schema', async () => {
    const asked: string[] = [];
    const client = {
      async request(req: HttpRequest) {
        asked.push(req.path);
        const type = decodeURIComponent(req.path.split('/').at(-1) as string);
        const template = CONNECTOR_TEMPLATES[type];
        if (!template) throw new ApiError({ method: 'GET', path: req.path, status: 404 });
        return template;
      },
    } as unknown as HttpClient;
    const catalog = await loadCatalogFromEnvironment(client, ['s3', 'kafka', 's3']);
    expect(asked).toEqual(['/ds-connections-types/template/kafka', '/ds-connections-types/template/s3']);
    expect(catalog.types()).toEqual(['s3']);
    expect(catalog.checkEntry({ name: 'k', type: 'kafka' }).warnings.map((w) => w.kind)).toEqual([
      'unknown-type',
    ]);
    expect(
      catalog
        .checkEntry({ name: 's', type: 's3' })
        .errors.map((e) => e.path)
        .sort(),
    ).toEqual(['/bucket_name']);
  });
});
