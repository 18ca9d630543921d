/**
 * Which values are secrets, and how they look on the way out. Lists and exports never show a
 * credential: a non-empty secret becomes `"******"`, an empty one stays empty (api-notes).
 */
import { getTemplate } from './templates.js';

/** The mask real deployments use. */
export const MASK = '******';

/** Keys treated as secrets for every type, so an unknown type's credentials are masked too. */
const ALWAYS_SECRET = new Set([
  'password',
  'aws_access_key',
  'aws_secret_key',
  'client_secret',
  'security_token',
  'private_key',
  'gcp_private_key',
  'api_key',
  'sas_token',
  'passphrase',
]);

const secretCache = new Map<string, ReadonlySet<string>>();

/** Secret keys of a connection type: its template's password fields plus the always-secret keys. */
export function secretKeysOf(type: string): ReadonlySet<string> {
  let keys = secretCache.get(type);
  if (keys === undefined) {
    const set = new Set(ALWAYS_SECRET);
    for (const f of getTemplate(type)?.fields ?? []) if (f.type === 'password') set.add(f.apiName);
    keys = set;
    secretCache.set(type, keys);
  }
  return keys;
}

function maskValue(value: unknown): unknown {
  if (value === undefined || value === null || value === '') return value;
  return MASK;
}

/** A copy of `conn` with secrets masked, encrypted custom fields included. */
export function maskConnection(conn: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const secrets = secretKeysOf(typeof conn.type === 'string' ? conn.type : '');
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(conn)) {
    if (secrets.has(key)) out[key] = maskValue(value);
    else if (key === 'custom_fields' && Array.isArray(value)) out[key] = value.map(maskCustomField);
    else out[key] = value;
  }
  return out;
}

function maskCustomField(field: unknown): unknown {
  if (field === null || typeof field !== 'object' || Array.isArray(field)) return field;
  const f = field as Record<string, unknown>;
  if (f.field_type !== 'encrypted') return field;
  return { ...f, field_value: maskValue(f.field_value) };
}

/** Paths (top-level key, or `custom_fields/<i>/field_value`) whose value is the mask. */
export function findMaskedValues(conn: Readonly<Record<string, unknown>>): string[] {
  const found: string[] = [];
  for (const [key, value] of Object.entries(conn)) {
    if (value === MASK) found.push(key);
    if (key === 'custom_fields' && Array.isArray(value)) {
      value.forEach((f, i) => {
        if (f !== null && typeof f === 'object' && (f as Record<string, unknown>).field_value === MASK) {
          found.push(`custom_fields/${i}/field_value`);
        }
      });
    }
  }
  return found;
}
