/**
 * `verify --overrides FILE`: the import's overrides applied to each snapshot entry before it is
 * compared, so a field set on purpose (`scanner_group` for the recovery site) is compared with the
 * override's value, not the snapshot's. Secrets are never compared: a secret field the overrides set is
 * given the service's mask, which the comparison reports as masked, not compared (its value, often a
 * `${env:NAME}` that the verifying shell does not hold, is never needed).
 */
import { applyOverrides, blocksFor, type Overrides } from '../importer/overrides.js';
import type { Connection } from '../model/connection.js';
import { isRecord } from '../own-property.js';
import { isSecretByName, MASK } from '../secrets.js';

/** An encrypted `custom_fields` element, its value masked. */
function maskEncryptedValue(element: unknown): unknown {
  if (!isRecord(element) || element.field_type !== 'encrypted' || !Object.hasOwn(element, 'field_value'))
    return element;
  return { ...element, field_value: MASK };
}

/**
 * `entry` as the import would have written it: the overrides applied, every secret they set masked
 * (a template `x-secret` field, a field named like a credential, an encrypted custom field).
 */
export function applyVerifyOverrides(
  entry: Connection,
  overrides: Overrides,
  secretFields: ReadonlySet<string>,
): Connection {
  // The top-level fields the overrides set on the entry (all, then its type's, then its name's).
  const keys = new Set(blocksFor(entry, overrides).flatMap((block) => Object.keys(block)));
  if (keys.size === 0) return entry;
  const out: Record<string, unknown> = { ...applyOverrides(entry, overrides) };
  for (const key of keys) {
    const value = out[key];
    if (key === 'custom_fields' && Array.isArray(value)) out[key] = value.map(maskEncryptedValue);
    else if ((secretFields.has(key) || isSecretByName(key, value)) && value !== '' && value !== null)
      out[key] = MASK;
  }
  return out as Connection;
}
