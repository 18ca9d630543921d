// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:NAME}" is a literal overrides placeholder, not a template
import { describe, expect, it } from 'vitest';
import { applyOverrides, resolveOverrides } from '../../src/importer/overrides.js';
import type { Connection } from '../../src/model/connection.js';
import {
  buildOverridesSkeleton,
  checkVariablePrefix,
  toVariablePart,
} from '../../src/overrides/init-overrides.js';
import type { TemplateCatalog } from '../../src/schema/catalog.js';
import { MASK } from '../../src/secrets.js';

/** A catalog where `vault` requires the secret `token`; nothing else is needed of it here. */
const catalog = {
  requiredSecretFields: (type: string) => (type === 'vault' ? ['token'] : []),
} as unknown as TemplateCatalog;

describe('overrides init: the skeleton', () => {
  it('names each needed secret DDS_<ENTRY>_<FIELD>, unique, and writes custom_fields by field_name', () => {
    const entries: Connection[] = [
      {
        name: 'finance-db',
        type: 'rdb-mysql',
        password: MASK,
        user: 'svc',
        custom_fields: [
          { field_name: 'cost_center', field_value: 'CC-1', field_type: 'clear' },
          { field_name: 'api_key', field_value: MASK, field_type: 'encrypted' },
        ],
      },
      // Same normalised name as the next one: the second gets _2.
      { name: 'a.b', type: 'rdb-mysql', password: MASK },
      { name: 'a-b', type: 'rdb-mysql', password: MASK },
      { name: 'nested', type: 'x', options: { auth: { secret: MASK, mode: 'basic' } } },
      { name: 'kv', type: 'vault' },
      { name: 'clear', type: 'rdb-mysql', password: 'not masked' },
    ];
    const { byName, variables } = buildOverridesSkeleton(entries, catalog);
    expect(variables.map((v) => v.variable)).toEqual([
      'DDS_FINANCE_DB_PASSWORD',
      'DDS_FINANCE_DB_API_KEY',
      'DDS_A_B_PASSWORD',
      'DDS_A_B_PASSWORD_2',
      'DDS_NESTED_OPTIONS_AUTH_SECRET',
      'DDS_KV_TOKEN',
    ]);
    expect(byName['finance-db']).toEqual({
      password: '${env:DDS_FINANCE_DB_PASSWORD}',
      custom_fields: [
        { field_name: 'api_key', field_value: '${env:DDS_FINANCE_DB_API_KEY}', field_type: 'encrypted' },
      ],
    });
    expect(byName.nested).toEqual({
      options: { auth: { secret: '${env:DDS_NESTED_OPTIONS_AUTH_SECRET}', mode: 'basic' } },
    });
    expect(variables.find((v) => v.entry === 'kv')).toMatchObject({ field: 'token', reason: 'required' });
    expect(byName.clear).toBeUndefined();

    // Applied with its variables set, nothing masked is left and the clear custom field is kept.
    const env = Object.fromEntries(variables.map((v) => [v.variable, `value-of-${v.variable}`]));
    const overrides = resolveOverrides({ all: {}, byType: {}, byName }, env);
    const applied = applyOverrides(entries[0] as Connection, overrides);
    expect(applied.password).toBe('value-of-DDS_FINANCE_DB_PASSWORD');
    expect(applied.custom_fields).toEqual([
      { field_name: 'cost_center', field_value: 'CC-1', field_type: 'clear' },
      { field_name: 'api_key', field_value: 'value-of-DDS_FINANCE_DB_API_KEY', field_type: 'encrypted' },
    ]);
  });

  it('takes a --prefix that can start a variable name, and nothing else', () => {
    expect(
      buildOverridesSkeleton([{ name: 'x', type: 't', pw: MASK }], catalog, 'DR').variables[0]?.variable,
    ).toBe('DR_X_PW');
    expect(checkVariablePrefix('_DR1')).toBe('_DR1');
    expect(() => checkVariablePrefix('1DR')).toThrow(/--prefix/);
    expect(() => checkVariablePrefix('DR-X')).toThrow(/--prefix/);
    expect(toVariablePart('ops-logs (eu)-s3')).toBe('OPS_LOGS__EU__S3');
  });
});
