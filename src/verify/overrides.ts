import { displayName } from '../display-name.js';
import { UsageError } from '../errors.js';
import {
  applyOverrides,
  blocksFor,
  describeUnresolved,
  type Overrides,
  UNRESOLVED_PLACEHOLDER,
} from '../importer/overrides.js';
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
 * `entry` as the import wrote it with `--overrides` (docs/verify.md): every secret they set masked, so
 * reported as not compared and its value (often an unset `${env:NAME}`) never needed.
 */
export function applyVerifyOverrides(
  entry: Connection,
  overrides: Overrides,
  secretFields: ReadonlySet<string>,
): Connection {
  const keys = new Set(blocksFor(entry, overrides).flatMap((block) => Object.keys(block)));
  if (keys.size === 0) return entry;
  const out: Record<string, unknown> = { ...applyOverrides(entry, overrides) };
  for (const key of keys) {
    const value = out[key];
    if (key === 'custom_fields' && Array.isArray(value)) out[key] = value.map(maskEncryptedValue);
    else if ((secretFields.has(key) || isSecretByName(key, value)) && value !== '' && value !== null)
      out[key] = MASK;
    else {
      // A value the import could not have sent (it refuses an unresolved placeholder): not one to compare.
      const placeholder = UNRESOLVED_PLACEHOLDER.exec(JSON.stringify(value) ?? '')?.[0];
      if (placeholder !== undefined) {
        throw new UsageError(
          `--overrides sets /${key} of ${displayName(entry.name)} to ${placeholder}, which is not resolved`,
          {
            hint: `Before verifying, ${describeUnresolved(placeholder)} (as the import needs)`,
          },
        );
      }
    }
  }
  return out as Connection;
}
