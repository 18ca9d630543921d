/**
 * Deterministic connection data: `generateConnections(n, { seed })` for benchmarks (100k in well under
 * 2 s) and {@link buildConnection} for the fixture generator. Every connection satisfies its template
 * (mandatory fields set) and uses the real connectors' field names and mixed value types (api-notes):
 * a share is `smbServer` + `sharedResource`, booleans are sometimes `"true"` strings, `enabled` is
 * `"yes"`, `security_tier` `"1"`. About a third of the sources that log in use a stored credential
 * (`credential_id`, `is_credential: true`, no username or password); the others carry fake clear
 * secrets, so a seed built from them imports without overrides.
 */
import { createPrng } from './prng.js';
import { listTemplateTypes } from './templates.js';
import type { SeedConnection } from './types.js';

/** Options of {@link generateConnections}. */
export interface GenerateOptions {
  /** PRNG seed; default 1. Same seed, same data. */
  readonly seed?: number;
  /** Types to cycle through; default every template type. */
  readonly types?: readonly string[];
  /** Prefix of every name; default `gen`. */
  readonly namePrefix?: string;
}

const DEPARTMENTS = ['finance', 'hr', 'sales', 'marketing', 'legal', 'eng', 'support', 'ops', 'risk', 'data'];
const REGIONS = ['us-east-1', 'us-west-2', 'eu-west-1', 'eu-central-1', 'ap-southeast-2'];
/** Scanner groups the generated sources use (each must exist in a target: see fixtures-gen's scanners). */
export const SCANNER_GROUPS: readonly string[] = ['default', 'us-scanners', 'eu-scanners', 'dmz-scanners'];
const GROUPS = SCANNER_GROUPS;

/** Ids of the stored credentials generated sources may use (see fixtures-gen's credentials). */
export const STORED_CREDENTIAL_IDS: readonly string[] = ['1', 'svc-db-readonly', 'svc-fileshare-scan'];

/** Types whose sources log in with a username and password, or a stored credential instead. */
const LOGIN_TYPES = new Set([
  'snowflake',
  'rdb-mysql',
  'rdb-postgresql',
  'rdb-mssql',
  'rdb-oracle',
  'mongodb',
  'smb',
  'salesforce',
  'generic-rest-api',
]);

function pick<T>(list: readonly T[], random: () => number): T {
  return list[Math.floor(random() * list.length)] as T;
}

function hex(random: () => number, length: number): string {
  let s = '';
  while (s.length < length)
    s += Math.floor(random() * 0x100000000)
      .toString(16)
      .padStart(8, '0');
  return s.slice(0, length);
}

function fakeSecret(random: () => number, hint: string): string {
  return `${hint}-${hex(random, 6)}!${Math.floor(random() * 90 + 10)}`;
}

/** Mixed-typed on purpose (api-notes): some strings, some real booleans and numbers. Writes into `c`. */
function addCommonFields(c: Record<string, unknown>, name: string, random: () => number, dept: string): void {
  const r = random();
  c.enabled = r < 0.7 ? 'yes' : r < 0.85 ? true : 'no';
  c.description = `${dept} data source ${name}`;
  c.scanner_group = pick(GROUPS, random);
  c.security_tier = random() < 0.8 ? String(1 + Math.floor(random() * 5)) : 1 + Math.floor(random() * 5);
  // The recorded shape: { id, email, origin, type: "it" | "business", isNotified }.
  const owners: unknown[] = [
    {
      id: `${dept}.owner@example.com`,
      email: `${dept}.owner@example.com`,
      origin: 'legacy',
      type: 'business',
      isNotified: true,
    },
  ];
  if (random() < 0.5) owners.push({ id: `${dept}-it`, type: 'it', isNotified: null });
  c.owners_v2 = owners;
  const custom: unknown[] = [
    {
      field_name: 'cost_center',
      field_value: `CC-${1000 + Math.floor(random() * 9000)}`,
      field_type: 'clear',
    },
  ];
  if (random() < 0.3) {
    custom.push({
      field_name: 'break_glass_pin',
      field_value: String(100000 + Math.floor(random() * 900000)),
      field_type: 'encrypted',
    });
  }
  c.custom_fields = custom;
  const tags: unknown[] = [{ tagName: 'department', tagValue: dept }];
  if (random() < 0.4)
    tags.push({ tagName: 'environment', tagValue: random() < 0.5 ? 'production' : 'staging' });
  c.tags = tags;
}

/** Login fields: a stored credential (about one in three) or a username and a fake clear password. */
function loginFields(user: string, secretHint: string, random: () => number): Record<string, unknown> {
  if (random() < 0.35) {
    return { credential_id: pick(STORED_CREDENTIAL_IDS, random), is_credential: true };
  }
  return {
    credential_id: '',
    is_credential: false,
    username: user,
    password: fakeSecret(random, secretHint),
  };
}

/** Type-specific fields of one connection; secrets are fake clear values. */
function typeFields(
  type: string,
  dept: string,
  index: number,
  random: () => number,
): Record<string, unknown> {
  const host = `${dept}-${index}`;
  const login = LOGIN_TYPES.has(type);
  switch (type) {
    case 's3': {
      const roleBased = random() < 0.35;
      return {
        bucket_name: `acme-${dept}-${index}-${hex(random, 4)}`,
        aws_region: pick(REGIONS, random),
        isCredentialsAuth: !roleBased,
        isIamRoleAuth: roleBased,
        // Role-based connections carry empty keys; the template does not require them.
        aws_access_key: roleBased ? '' : `AKIA${hex(random, 16).toUpperCase()}`,
        aws_secret_key: roleBased ? '' : `${hex(random, 20)}/${hex(random, 19)}`,
        aws_role_arn: '',
        is_ocr_enabled: random() < 0.5 ? 'false' : false,
        differential: true,
      };
    }
    case 'snowflake':
      return {
        account: `acme-${pick(['xy12345', 'ab67890', 'cd24680'], random)}`,
        warehouse: `${dept.toUpperCase()}_WH`,
        database: `${dept.toUpperCase()}_DB`,
        schema: 'PUBLIC',
        role: `${dept.toUpperCase()}_READER`,
        ...(login ? loginFields(`svc_dds_${dept}`, 'Sf', random) : {}),
      };
    case 'rdb-mysql':
    case 'rdb-postgresql':
    case 'rdb-mssql':
    case 'rdb-oracle': {
      const port = { 'rdb-mysql': 3306, 'rdb-postgresql': 5432, 'rdb-mssql': 1433, 'rdb-oracle': 1521 }[type];
      return {
        // A bare host in recorded data; a host:port here and there.
        rdb_url: random() < 0.5 ? `${host}.db.internal` : `${host}.db.internal:${port}`,
        rdb_name: `${dept}_${index % 7 === 0 ? 'archive' : 'main'}`,
        ...loginFields(`dds_${dept}`, 'Db', random),
        rdb_comma_sep_table_list: random() < 0.5 ? `${cap(dept)}Users, ${cap(dept)}Events` : '',
        rdb_is_sample_data: random() < 0.5 ? 'true' : false,
        rdb_sample_type: 'size',
      };
    }
    case 'mongodb':
      return {
        // A host with no scheme, as recorded; sometimes a mongodb:// URL.
        mongo_url: random() < 0.6 ? `${host}.mongo.internal` : `mongodb://${host}.mongo.internal:27017`,
        mongo_db_name: dept,
        mongo_collection_name: '',
        authentication_db: 'admin',
        ...loginFields(`dds_${dept}`, 'Mg', random),
      };
    case 'smb':
      return {
        smbServer: `fs-${host}.corp.example.com`,
        sharedResource: `Public\\${dept}`,
        ...loginFields(`svc-dds-${dept}`, 'Smb', random),
        is_ocr_enabled: random() < 0.5 ? 'true' : true,
        differential: false,
      };
    case 'salesforce':
      return {
        is_salesforce_custom_url: true,
        salesforce_custom_url: `https://acme-${dept}.my.salesforce.com`,
        ...loginFields(`dds.${dept}@acme.example.com`, 'Sfdc', random),
      };
    case 'googledrive':
      return {
        google_service_account_json: `{"type":"service_account","private_key_id":"${hex(random, 12)}"}`,
        google_service_account_user: `dds-${dept}@acme.example.com`,
        isGoogleServiceAccount: true,
        drives_to_scan: '',
        scan_scope: random() < 0.5 ? 'myDrive' : 'sharedDrives',
        is_exclusion_drives_enabled: false,
        is_ocr_enabled: 'true',
      };
    case 'generic-rest-api':
      return {
        generic_server_url: `https://${host}.api.internal`,
        ...loginFields(`dds-${dept}`, 'Rest', random),
      };
    case 'gcp-big-query':
      return {
        gcp_project_id: `acme-${dept}-${index % 1000}`,
        gcp_client_email: `dds-scanner@acme-${dept}.iam.gserviceaccount.com`,
        gcp_private_key: `-----BEGIN PRIVATE KEY-----\nMIIE${hex(random, 40)}\n-----END PRIVATE KEY-----\n`,
      };
    default:
      return { host: `${host}.internal`, password: fakeSecret(random, 'X') };
  }
}

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** One connection of `type` named `name`, valid against its template; `_id` first when given. */
export function buildConnection(
  type: string,
  name: string,
  random: () => number,
  index = 0,
  dept: string = pick(DEPARTMENTS, random),
  _id?: string,
): SeedConnection {
  // Built by assignment, not spreads: spreads made 100k connections twice as slow (GC-bound).
  const c: Record<string, unknown> = _id === undefined ? { name, type } : { _id, name, type };
  addCommonFields(c, name, random, dept);
  const specific = typeFields(type, dept, index, random);
  for (const key in specific) c[key] = specific[key];
  return c as SeedConnection;
}

/** `n` valid connections of mixed types with stable 24-hex `_id`s and unique names. */
export function generateConnections(n: number, options: GenerateOptions = {}): SeedConnection[] {
  if (!Number.isInteger(n) || n < 0) throw new Error(`Expected n to be an integer >= 0, got ${n}`);
  const random = createPrng(options.seed ?? 1);
  const types = options.types ?? listTemplateTypes();
  if (types.length === 0) throw new Error('Expected at least one type');
  const prefix = options.namePrefix ?? 'gen';
  const idBase = ((options.seed ?? 1) >>> 0).toString(16).padStart(8, '0');
  const out: SeedConnection[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const type = types[i % types.length] as string;
    // Not i % 10: with ten types every type would always get the same department.
    const dept = DEPARTMENTS[Math.floor(i / types.length) % DEPARTMENTS.length] as string;
    const _id = idBase + i.toString(16).padStart(16, '0');
    out[i] = buildConnection(type, `${prefix}-${type}-${dept}-${i}`, random, i, dept, _id);
  }
  return out;
}
