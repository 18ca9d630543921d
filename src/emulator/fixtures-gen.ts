/**
 * Builds the environment fixtures in `fixtures/environments/` (prod, dr-partial, empty)
 * deterministically. The JSON files are committed; rebuild them with
 * `npm run build && node dist/src/emulator/fixtures-gen.js fixtures/environments`.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PROD_NAMES } from './fixtures-names.js';
import { buildConnection, SCANNER_GROUPS, STORED_CREDENTIAL_IDS } from './generate.js';
import { createPrng } from './prng.js';
import { DEFAULT_SCAN_TEMPLATES } from './store.js';
import type { EmulatorSeed, SeedCase, SeedConnection } from './types.js';

/** A connection type the emulator has no template for: validation falls back to the generic schema. */
const UNKNOWN_TYPE_CONNECTION: SeedConnection = {
  name: 'eng-events-kafka',
  type: 'kafka',
  enabled: 'yes',
  scanner_group: 'default',
  security_tier: '3',
  brokers: 'kafka-1.internal:9093,kafka-2.internal:9093',
  topic_pattern: 'events.*',
  sasl_username: 'dds-scanner',
  password: 'Kafka-Sasl-2024!',
  tags: [{ tagName: 'department', tagValue: 'eng' }],
};

const SEASONS = ['Winter', 'Spring', 'Summer', 'Autumn'];

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** Real-looking fake passwords: what people actually type, so a leak in a report is obvious. */
function prodPassword(dept: string, i: number): string {
  return `Pr0d-${cap(dept)}-${SEASONS[i % 4]}${2023 + (i % 3)}!`;
}

function isoDay(base: string, days: number, hour = 9): string {
  const d = new Date(`${base}T00:00:00.000Z`);
  d.setUTCDate(d.getUTCDate() + days);
  d.setUTCHours(hour);
  return d.toISOString();
}

function id24(prefix: string, i: number): string {
  return prefix + i.toString(16).padStart(24 - prefix.length, '0');
}

/** Server-managed fields an export carries and a client must ignore (api-notes). */
function serverFields(name: string, i: number, random: () => number): Record<string, unknown> {
  const tested = isoDay('2024-09-01', i % 60, 3);
  const fields: Record<string, unknown> = {
    id: name,
    created_at: isoDay('2023-01-10', i * 5),
    updated_at: isoDay('2024-06-01', i * 2),
    connectionStatusTest: { is_success: random() < 0.9, last_connection: tested },
  };
  if (i % 3 === 0) {
    fields.last_scan_at = isoDay('2024-10-01', i % 30, 2);
    fields.connectionStatusScan = { is_success: true, last_connection: fields.last_scan_at };
  }
  return fields;
}

function prodConnection(type: string, name: string, i: number, random: () => number): SeedConnection {
  const dept = name.split('-')[0] ?? 'data';
  const c = buildConnection(type, name, random, i, dept, id24('65a1f0c0e4b0a1b2c3d4', i)) as Record<
    string,
    unknown
  >;
  if (typeof c.password === 'string' && c.password !== '') c.password = prodPassword(dept, i);
  if (type === 's3') {
    // Every third bucket is read with the scanner's IAM role: keys empty, not masked.
    const roleBased = i % 3 === 1;
    c.isCredentialsAuth = !roleBased;
    c.isIamRoleAuth = roleBased;
    c.aws_access_key = roleBased
      ? ''
      : `AKIA${(0x5a3f00 + i * 7919).toString(16).toUpperCase()}EXAMPLE${i % 10}`;
    c.aws_secret_key = roleBased ? '' : `wJalrXUtnFEMI/K7MDENG/bPxRfiCY${cap(dept)}${i}KEY`;
  }
  Object.assign(c, serverFields(name, i, random));
  return c as SeedConnection;
}

const POLICIES: ReadonlyArray<{ name: string; label: string; severity: string; types: string }> = [
  {
    name: 'PCI - Credit Card Exposure',
    label: 'Credit card numbers found',
    severity: 'critical',
    types: 'any',
  },
  {
    name: 'GDPR - EU Personal Data Outside EU',
    label: 'EU personal data stored outside the EU',
    severity: 'high',
    types: 'any',
  },
  {
    name: 'HIPAA - PHI in Open Shares',
    label: 'Protected health information in an open share',
    severity: 'critical',
    types: 'files',
  },
  {
    name: 'SSN in Unstructured Data',
    label: 'US social security numbers in documents',
    severity: 'high',
    types: 'files',
  },
  {
    name: 'Stale Sensitive Data',
    label: 'Sensitive data untouched for 3 years',
    severity: 'low',
    types: 'any',
  },
  {
    name: 'Open Access to Sensitive Files',
    label: 'Sensitive files readable by everyone',
    severity: 'medium',
    types: 'files',
  },
  {
    name: 'Unencrypted Personal Data',
    label: 'Personal data in unencrypted columns',
    severity: 'medium',
    types: 'db',
  },
  {
    name: 'Credentials in Data',
    label: 'Passwords or API keys stored as data',
    severity: 'high',
    types: 'any',
  },
];

const STATUSES = [
  'open',
  'open',
  'open',
  'open',
  'acknowledged',
  'acknowledged',
  'silenced',
  'resolved',
  'resolved',
  'remediated',
];
const ASSIGNEES = [
  'alice.ng@example.com',
  'bob.kramer@example.com',
  'chen.li@example.com',
  'dpo@example.com',
  null,
];
const SEVERITIES = ['critical', 'high', 'medium', 'low'];

function buildCases(
  connections: readonly SeedConnection[],
  count: number,
  idPrefix: string,
  seed: number,
): SeedCase[] {
  const random = createPrng(seed);
  const files = new Set(['s3', 'smb']);
  const cases: SeedCase[] = [];
  for (let i = 0; i < count; i++) {
    const policy = POLICIES[i % POLICIES.length]!;
    const candidates = connections.filter((c) =>
      policy.types === 'any' ? true : policy.types === 'files' ? files.has(c.type) : !files.has(c.type),
    );
    const conn = candidates[Math.floor(random() * candidates.length)]!;
    const id = id24(idPrefix, i + 1);
    const status = STATUSES[Math.floor(random() * STATUSES.length)]!;
    // Mostly the policy's own severity, sometimes another, so every pairing exists.
    const severity = random() < 0.75 ? policy.severity : SEVERITIES[Math.floor(random() * 4)]!;
    const created = isoDay('2024-07-01', Math.floor(random() * 120), 1 + Math.floor(random() * 20));
    cases.push({
      id,
      caseId: id,
      caseLabel: `${policy.label} in ${conn.name}`,
      policyName: policy.name,
      severityLevel: severity,
      assignee: ASSIGNEES[Math.floor(random() * ASSIGNEES.length)] ?? null,
      dataSourceName: conn.name,
      dataSourceType: conn.type,
      caseStatus: status,
      numberOfAffectedObjects: 1 + Math.floor(random() * 5000),
      category: policy.types === 'files' ? 'File Access' : 'Data Privacy',
      created_at: created,
      updated_at: status === 'open' ? created : isoDay('2024-11-01', Math.floor(random() * 20)),
    });
  }
  return cases;
}

/** The production-like environment. */
export function buildProd(): EmulatorSeed {
  const random = createPrng(20240301);
  const connections: SeedConnection[] = [];
  let i = 0;
  for (const [type, names] of PROD_NAMES) {
    for (const name of names) connections.push(prodConnection(type, name, i++, random));
  }
  connections.push({ _id: id24('65a1f0c0e4b0a1b2c3d4', i++), ...UNKNOWN_TYPE_CONNECTION });
  const byName = (n: string) => connections.find((c) => c.name === n)!._id!;
  const [full, metadata, pii, pci] = DEFAULT_SCAN_TEMPLATES.map((t) => t._id);
  const scanProfiles = [
    {
      _id: '66b2a0d1c3e4f5a6b7c8d901',
      name: 'Nightly PII - Finance',
      description: 'Finance stores, every night',
      dataSourceList: ['finance-invoices-s3', 'finance-sf', 'finance-ledger-pg', 'finance-erp-mssql'].map(
        byName,
      ),
      scanTemplateId: pii,
      schedule: { cronExpression: '0 2 * * *', timeZone: 'UTC' },
      active: true,
      owners: ['dpo@example.com'],
      scanType: 'dsScan',
      createdAt: '2024-05-02T10:00:00.000Z',
      updatedAt: '2024-05-02T10:00:00.000Z',
    },
    {
      _id: '66b2a0d1c3e4f5a6b7c8d902',
      name: 'Weekly Metadata - Databases',
      description: 'All relational databases, metadata only',
      dataSourceList: connections.filter((c) => c.type.startsWith('rdb-')).map((c) => c._id!),
      scanTemplateId: metadata,
      schedule: { cronExpression: '0 3 * * 0', timeZone: 'Europe/Berlin' },
      active: true,
      owners: ['alice.ng@example.com'],
      scanType: 'dsScan',
      createdAt: '2024-05-10T08:30:00.000Z',
      updatedAt: '2024-08-14T16:05:00.000Z',
    },
    {
      _id: '66b2a0d1c3e4f5a6b7c8d903',
      name: 'One-time PCI sweep - S3',
      description: 'Run once before the PCI audit',
      dataSourceList: connections.filter((c) => c.type === 's3').map((c) => c._id!),
      scanTemplateId: pci,
      isSingleRunScan: true,
      active: true,
      owners: ['bob.kramer@example.com'],
      scanType: 'dsScan',
      createdAt: '2024-09-20T12:00:00.000Z',
      updatedAt: '2024-09-20T12:00:00.000Z',
    },
    {
      _id: '66b2a0d1c3e4f5a6b7c8d904',
      name: 'Monthly Full - Shares',
      description: 'File shares, first day of the month',
      // Real profiles often list data sources by name instead of _id (api-notes).
      dataSourceList: connections.filter((c) => c.type === 'smb').map((c) => c.name),
      scanTemplateId: full,
      schedule: { cronExpression: '0 4 1 * *', timeZone: 'America/New_York' },
      active: false,
      owners: ['chen.li@example.com'],
      scanType: 'dsScan',
      createdAt: '2024-06-01T09:00:00.000Z',
      updatedAt: '2024-06-01T09:00:00.000Z',
    },
  ];
  return {
    connections,
    scanProfiles,
    cases: buildCases(connections, 240, '67c3b1e2', 7),
    scanTemplates: [...DEFAULT_SCAN_TEMPLATES],
  };
}

/**
 * A disaster-recovery environment that partly overlaps prod: the same names carry other `_id`s
 * (another environment), a fifth of them differ in some values, three in ten are missing, and a few
 * exist only here.
 */
export function buildDrPartial(prod: EmulatorSeed): EmulatorSeed {
  const random = createPrng(4242);
  const connections: SeedConnection[] = [];
  (prod.connections ?? []).forEach((source, i) => {
    const bucket = i % 10;
    if (bucket === 3 || bucket === 7 || bucket === 9) return;
    const c: Record<string, unknown> = structuredClone(source);
    c._id = id24('75d4e2f3a1b2c3d4e5f6', i);
    c.created_at = isoDay('2024-10-20', i % 5);
    c.updated_at = c.created_at;
    delete c.last_scan_at;
    delete c.connectionStatusScan;
    if (bucket === 1 || bucket === 5) {
      c.scanner_group = 'dr-scanners';
      if (typeof c.password === 'string' && c.password !== '') c.password = `Dr-${c.password}`;
      if (c.type === 'snowflake') c.warehouse = 'DR_WH';
      if (c.type === 's3') c.aws_region = 'us-west-2';
      if (bucket === 5) c.enabled = c.enabled === 'yes' ? true : 'yes';
      if (bucket === 1) c.tags = [...((c.tags as unknown[]) ?? []), { tagName: 'dr', tagValue: 'restored' }];
    }
    connections.push(c as SeedConnection);
  });
  const extras: ReadonlyArray<readonly [string, string]> = [
    ['s3', 'dr-backup-vault-s3'],
    ['rdb-postgresql', 'dr-restore-staging-pg'],
    ['snowflake', 'dr-failover-sf'],
    ['smb', 'dr-runbooks-share'],
    ['mongodb', 'dr-events-replica-mongo'],
  ];
  extras.forEach(([type, name], k) => {
    connections.push(buildConnection(type, name, random, 900 + k, 'ops', id24('75d4e2f3a1b2c3d4e5f7', k)));
  });
  const byName = (n: string) => connections.find((c) => c.name === n)?._id;
  const scanProfiles = [
    {
      _id: '76e5c2d3e4f5a6b7c8d9e001',
      name: 'DR Smoke Scan',
      description: 'Metadata scan of restored databases',
      dataSourceList: ['dr-restore-staging-pg', 'finance-ledger-pg']
        .map(byName)
        .filter((x) => x !== undefined),
      scanTemplateId: DEFAULT_SCAN_TEMPLATES[1]!._id,
      schedule: { cronExpression: '30 1 * * *', timeZone: 'UTC' },
      active: true,
      owners: ['ops@example.com'],
      scanType: 'dsScan',
    },
  ];
  return {
    connections,
    scanProfiles,
    cases: buildCases(connections, 40, '77f6d3e4', 99),
    scanTemplates: [...DEFAULT_SCAN_TEMPLATES],
  };
}

/**
 * An environment file: the seed plus the stored credentials (`credentials`, by `credential_id`) and the
 * scanners (`scanners`, `{ name, scanner_group }`) the emulator lists (`GET /api/v1/credentials`,
 * `GET /api/v1/scanner-status`). Their shape beyond those keys is a guess (api-notes).
 */
export type EnvironmentFixture = EmulatorSeed & {
  credentials: Array<Record<string, unknown> & { credential_id: string }>;
  scanners: Array<Record<string, unknown> & { name: string; scanner_group: string }>;
};

/** Stored credentials: every id the generator may reference, with fake clear values. */
function buildCredentials(extraIds: readonly string[] = []): EnvironmentFixture['credentials'] {
  return [...STORED_CREDENTIAL_IDS, ...extraIds].map((credential_id, i) => ({
    credential_id,
    type: 'simple',
    username: `svc-stored-${i + 1}`,
    password: `Stored-Cred-${i + 1}-2024!`,
  }));
}

/** Two scanners per group `groups` names. */
function buildScanners(groups: readonly string[]): EnvironmentFixture['scanners'] {
  return groups.flatMap((scanner_group) =>
    [1, 2].map((n) => ({ name: `${scanner_group}-scanner-${n}`, scanner_group })),
  );
}

/** Every environment fixture, by file name. */
export function buildFixtures(): Record<string, EnvironmentFixture> {
  const prod = buildProd();
  const dr = buildDrPartial(prod);
  return {
    'prod.json': { ...prod, credentials: buildCredentials(), scanners: buildScanners(SCANNER_GROUPS) },
    // The DR site lacks the eu scanners and one stored credential: a restore must say so.
    'dr-partial.json': {
      ...dr,
      credentials: buildCredentials().filter((c) => c.credential_id !== 'svc-fileshare-scan'),
      scanners: buildScanners([...SCANNER_GROUPS.filter((g) => g !== 'eu-scanners'), 'dr-scanners']),
    },
    // A new recovery environment: no connections, profiles or cases yet, but its infrastructure is set
    // up (scanners registered, stored credentials in its vault), so a restore's references are there.
    'empty.json': {
      connections: [],
      scanProfiles: [],
      cases: [],
      credentials: buildCredentials(),
      scanners: buildScanners([...SCANNER_GROUPS, 'dr-scanners']),
    },
  };
}

/** Write the fixtures into `dir`. */
export async function writeFixtures(dir: string): Promise<string[]> {
  const written: string[] = [];
  for (const [file, seed] of Object.entries(buildFixtures())) {
    const path = join(dir, file);
    await writeFile(path, `${JSON.stringify(seed, null, 2)}\n`);
    written.push(path);
  }
  return written;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const dir = process.argv[2] ?? 'fixtures/environments';
  writeFixtures(dir).then(
    (files) => process.stdout.write(`${files.join('\n')}\n`),
    (err: unknown) => {
      process.stderr.write(`${String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
