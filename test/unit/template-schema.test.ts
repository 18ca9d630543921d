import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { HttpClient, HttpRequest } from '../../src/api/http.js';
import { generateConnections } from '../../src/emulator/generate.js';
import { CONNECTOR_TEMPLATES } from '../../src/emulator/templates.js';
import { ApiError, InputFileError, UsageError } from '../../src/errors.js';
import type { Connection } from '../../src/model/connection.js';
import type { ConnectorTemplate } from '../../src/model/template.js';
import {
  buildCatalogFromTemplates,
  isMaskedSecretProblem,
  loadShippedCatalog,
  shippedTemplatesDir,
} from '../../src/schema/catalog.js';
import { looseEnum, templateToSchema } from '../../src/schema/template-schema.js';
import { loadCatalogFromEnvironment } from '../../src/validate/target-catalog.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** The emulator's templates, seen through the client's (index-signature) type. */
const templates = Object.values(CONNECTOR_TEMPLATES) as unknown as ConnectorTemplate[];
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
  'gcp-big-query',
];

function propertiesOf(schema: Record<string, unknown>): Record<string, Record<string, unknown>> {
  return schema.properties as Record<string, Record<string, unknown>>;
}

describe('templateToSchema (emulator templates)', () => {
  it.each(templates.map((t) => [t.name, t] as const))(
    '%s: mandatory -> required, password -> x-secret, options -> enum',
    (_, template) => {
      const schema = templateToSchema(template);
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

  it('keeps each validation errorText and applies the regex to non-empty values only', () => {
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
    const catalog = buildCatalogFromTemplates([template]);
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

  it('leaves out a regex JavaScript cannot compile, with a catalog warning', () => {
    const catalog = buildCatalogFromTemplates([
      {
        name: 'x',
        fields: [{ apiName: 'a', type: 'string', validation: [{ regex: '([a-z', errorText: 'x' }] }],
      },
    ]);
    expect(catalog.warnings).toEqual([expect.stringMatching(/field a: regex .* is not valid/)]);
    expect(catalog.checkEntry({ name: 'n', type: 'x', a: '((' }).errors).toEqual([]);
  });

  it('accepts template regexes written without the u flag in mind', () => {
    const catalog = buildCatalogFromTemplates([
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
  const catalog = buildCatalogFromTemplates(templates);

  it('finds every generated connection valid', () => {
    for (const entry of generateConnections(200, { seed: 3 })) {
      expect(catalog.checkEntry(entry as unknown as Connection).errors).toEqual([]);
    }
  });

  it('reports a missing mandatory field with its pointer', () => {
    const [entry] = generateConnections(1, { seed: 3, types: ['snowflake'] }) as unknown as Connection[];
    const { warehouse: _w, ...rest } = entry as Connection;
    expect(catalog.checkEntry(rest as Connection).errors).toEqual([
      { kind: 'schema', entry: rest.name, type: 'snowflake', path: '/warehouse', message: 'is required' },
    ]);
  });

  it('knows secrets and required secrets', () => {
    expect([...catalog.secretFields('s3')].sort()).toEqual(['aws_access_key', 'aws_secret_key']);
    expect(catalog.requiredSecretFields('s3')).toEqual([]);
    expect(catalog.requiredSecretFields('rdb-mysql')).toEqual(['password']);
    expect(catalog.requiredSecretFields('mongodb')).toEqual([]);
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
    expect(report.warnings.map((w) => [w.path, isMaskedSecretProblem(w)])).toEqual([['/password', true]]);
  });
});

describe('shipped schemas/templates', () => {
  it('ship every required type, and agree with the emulator templates on required, x-secret and enums', async () => {
    const shipped = await loadShippedCatalog();
    expect(shipped.types()).toEqual([...SHIPPED_TYPES].sort());
    for (const template of templates) {
      const file = JSON.parse(
        await readFile(join(shippedTemplatesDir(), `${template.name}.schema.json`), 'utf8'),
      ) as Record<string, unknown>;
      expect(file.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      const fromTemplate = templateToSchema(template);
      expect([...(file.required as string[])].sort()).toEqual(
        [...(fromTemplate.required as string[])].sort(),
      );
      expect([...shipped.secretFields(template.name)].sort()).toEqual(
        [...buildCatalogFromTemplates([template]).secretFields(template.name)].sort(),
      );
      const fileProps = propertiesOf(file);
      for (const [key, prop] of Object.entries(propertiesOf(fromTemplate))) {
        expect(fileProps[key]?.enum, `${template.name}.${key}`).toEqual(prop.enum);
        expect(fileProps[key]?.pattern, `${template.name}.${key}`).toEqual(prop.pattern);
      }
    }
  });

  it('find every generated connection valid, as the built catalog does', async () => {
    const shipped = await loadShippedCatalog();
    for (const entry of generateConnections(100, { seed: 11 })) {
      expect(shipped.checkEntry(entry as unknown as Connection).errors).toEqual([]);
    }
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
    ).toEqual(['/aws_region', '/bucket_name']);
  });
});
