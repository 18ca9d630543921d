/**
 * Secret hygiene. Two mechanisms, both needed:
 * - field-level masking: credential fields of a connection (by template `x-secret`, by name, or values
 *   the service already masked) are replaced by {@link MASK} before anything is printed or stored;
 * - a process-wide registry of known secret strings (tokens, override values read from the environment)
 *   that {@link scrub} removes from any text on its way to stdout, stderr, a log or a report. It is the
 *   last line of defence against a secret echoed back inside a service message.
 */

/** How the service masks a secret, and how dds-migrate shows one. */
export const MASK = '******';

const knownSecrets = new Set<string>();

/** Values shorter than this are not scrubbed from text: "1" or "yes" would shred every message. */
const MIN_SCRUB_LENGTH = 4;

/** Remember a secret value (token, password from an override) so that {@link scrub} removes it from text. */
export function registerSecret(value: string | undefined | null): void {
  if (typeof value !== 'string') return;
  const trimmed = value.trim();
  if (trimmed.length >= MIN_SCRUB_LENGTH && trimmed !== MASK) knownSecrets.add(trimmed);
}

/** Forget all registered secrets (tests). */
export function clearRegisteredSecrets(): void {
  knownSecrets.clear();
}

/** Replace every registered secret in `text` with {@link MASK}. */
export function scrub(text: string): string {
  if (knownSecrets.size === 0 || text.length === 0) return text;
  let out = text;
  // Longest first, so that a secret containing another is removed whole.
  const ordered = [...knownSecrets].sort((a, b) => b.length - a.length);
  for (const secret of ordered) {
    if (out.includes(secret)) out = out.split(secret).join(MASK);
  }
  return out;
}

/**
 * Field names that hold credentials whatever the template says. Matching is on the last segment of
 * the key, case-insensitive. Used when no template is known and as a floor under template knowledge.
 */
const SECRET_FIELD_PATTERN =
  /(^|_)(password|passwd|pwd|secret|secret_key|aws_secret_key|aws_access_key|access_key|private_key|api_key|apikey|token|client_secret|credentials?)$/i;

/** True when a field name looks like a credential field. */
export function isSecretFieldName(name: string): boolean {
  return SECRET_FIELD_PATTERN.test(name) || /password|secret|private_?key|token/i.test(name);
}

/** True when a value is the service's mask. */
export function isMasked(value: unknown): boolean {
  return value === MASK;
}

/**
 * Return a copy of a connection-like object with every secret field masked. `secretFields` are the
 * template's `x-secret` keys; names that look like credentials are masked too. Empty strings stay
 * empty (an empty optional secret is information, not a secret). `custom_fields` entries of
 * `field_type: "encrypted"` are masked as well.
 */
export function maskSecrets<T extends Record<string, unknown>>(
  entry: T,
  secretFields: ReadonlySet<string> = new Set(),
): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) {
    if ((secretFields.has(key) || isSecretFieldName(key)) && typeof value === 'string' && value !== '') {
      out[key] = MASK;
    } else if (key === 'custom_fields' && Array.isArray(value)) {
      out[key] = value.map((field) => maskCustomField(field));
    } else {
      out[key] = value;
    }
  }
  return out as T;
}

function maskCustomField(field: unknown): unknown {
  if (field && typeof field === 'object' && !Array.isArray(field)) {
    const f = field as Record<string, unknown>;
    if (f.field_type === 'encrypted' && typeof f.field_value === 'string' && f.field_value !== '') {
      return { ...f, field_value: MASK };
    }
  }
  return field;
}
