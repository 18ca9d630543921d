/**
 * Deterministic security cases for benchmarks and large demos: `generateCases(n, { seed })` (1M in a few
 * seconds). Each case has the fields of the shipped fixtures (`fixtures/environments/*.json`): an id and
 * caseId (24 hex digits, unique), label, policy, severity, assignee, data source, status, counts, dates.
 */
import { createPrng } from './prng.js';
import type { SeedCase } from './types.js';

/** Options of {@link generateCases}. */
export interface GenerateCasesOptions {
  /** PRNG seed; default 1. Same seed, same cases. */
  readonly seed?: number;
}

const POLICIES = [
  'PCI - Credit Card Exposure',
  'PII - Social Security Numbers',
  'GDPR - EU Personal Data',
  'HIPAA - Health Records',
  'Secrets in Code',
];
const SEVERITIES = ['critical', 'high', 'medium', 'low'];
const STATUSES = ['open', 'open', 'open', 'acknowledged', 'silenced', 'remediated'];
const ASSIGNEES = ['chen.li@example.com', 'ana.silva@example.com', 'sam.o@example.com', ''];
const SOURCES = ['finance-invoices-s3', 'hr-postgres', 'sales-snowflake', 'legal-share', 'eng-mongo'];
const TYPES = ['s3', 'rdb-postgresql', 'snowflake', 'smb', 'mongodb'];
const BASE_TIME = Date.UTC(2024, 0, 1);

function pickFrom<T>(list: readonly T[], random: () => number): T {
  return list[Math.floor(random() * list.length)] as T;
}

/** `n` generated cases, ids `ca5e` followed by the index in hex (24 hex digits in all). */
export function generateCases(n: number, options: GenerateCasesOptions = {}): SeedCase[] {
  const random = createPrng(options.seed ?? 1);
  const out: SeedCase[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const id = `ca5e${i.toString(16).padStart(20, '0')}`;
    const s = Math.floor(random() * SOURCES.length);
    const policy = pickFrom(POLICIES, random);
    const created = new Date(BASE_TIME + Math.floor(random() * 300 * 86_400_000)).toISOString();
    out[i] = {
      id,
      caseId: id,
      caseLabel: `${policy} found in ${SOURCES[s]}`,
      policyName: policy,
      severityLevel: pickFrom(SEVERITIES, random),
      assignee: pickFrom(ASSIGNEES, random),
      dataSourceName: SOURCES[s],
      dataSourceType: TYPES[s],
      caseStatus: pickFrom(STATUSES, random),
      numberOfAffectedObjects: 1 + Math.floor(random() * 5000),
      category: 'Data Privacy',
      created_at: created,
      updated_at: created,
    };
  }
  return out;
}
