/**
 * Secret hygiene (docs/secrets.md): credential fields masked as {@link MASK} before a connection is printed or
 * stored; {@link scrub} removes known secrets from all outgoing text: the last defence if a service echoes one.
 */
import { memoizeBounded } from './bounded-memo.js';
import { assignOwn } from './own-property.js';

/** How the service masks a secret, and how dds-migrate shows one. */
export const MASK = '******';

const knownSecrets = new Set<string>();

/** The known secrets, longest first (a secret containing another is removed whole). */
let ordered: readonly string[] | undefined;
function orderedSecrets(): readonly string[] {
  ordered ??= [...knownSecrets].sort((a, b) => b.length - a.length);
  return ordered;
}

/** Past this many secrets {@link scrub} reads text once, not per secret (a 100 000 verify took minutes). */
const SEARCH_EACH_UP_TO = 32;

/** The first {@link MIN_SCRUB_LENGTH} characters of each known secret: one look-up rules out a position. */
const prefixes = new Set<string>();
/** The distinct lengths of the known secrets, longest first. */
let lengths: number[] = [];

const DIGITS_ONLY = /^[0-9]+$/;

function isDigit(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  return c >= 0x30 && c <= 0x39;
}

/**
 * Whether `secret` at `at` in `text` is removed. A digits-only secret only where it stands alone: a PIN
 * `453831` inside the timestamp `1795447453831` is no secret, and masking it there made JSON invalid.
 */
function standsAlone(text: string, at: number, secret: string): boolean {
  if (!DIGITS_ONLY.test(secret)) return true;
  return !isDigit(text, at - 1) && !isDigit(text, at + secret.length);
}

/** Every occurrence of `secret` in `text` that {@link standsAlone}, replaced by {@link MASK}. */
function replaceSecret(text: string, secret: string): string {
  if (!DIGITS_ONLY.test(secret)) return text.split(secret).join(MASK);
  let out = '';
  let last = 0;
  for (let at = text.indexOf(secret); at >= 0; at = text.indexOf(secret, at + 1)) {
    if (at < last || !standsAlone(text, at, secret)) continue;
    out += `${text.slice(last, at)}${MASK}`;
    last = at + secret.length;
  }
  return last === 0 ? text : out + text.slice(last);
}

/** The longest known secret that starts at `at` in `text` and is to be removed there, if any. */
function secretAt(text: string, at: number): string | undefined {
  if (!prefixes.has(text.slice(at, at + MIN_SCRUB_LENGTH))) return undefined;
  for (const length of lengths) {
    const candidate = text.slice(at, at + length);
    if (candidate.length === length && knownSecrets.has(candidate) && standsAlone(text, at, candidate))
      return candidate;
  }
  return undefined;
}

/** Every known secret in `text` replaced, reading it once. */
function scrubByScan(text: string): string {
  let out = '';
  let last = 0;
  for (let i = 0; i + MIN_SCRUB_LENGTH <= text.length; ) {
    const found = secretAt(text, i);
    if (found !== undefined) {
      out += `${text.slice(last, i)}${MASK}`;
      i += found.length;
      last = i;
      continue;
    }
    i += 1;
  }
  return last === 0 ? text : out + text.slice(last);
}

/** Values shorter than this are not scrubbed from text: "1" or "yes" would shred every message. */
const MIN_SCRUB_LENGTH = 4;

/**
 * Remember a secret (token, override password) for {@link scrub} to remove: as is, and as it stands in a JSON
 * string if that differs (a key file's line breaks are `\n` in a report, `--json` or a quoted diff value).
 */
export function registerSecret(value: string | undefined | null): void {
  if (typeof value !== 'string') return;
  const trimmed = value.trim();
  if (trimmed.length < MIN_SCRUB_LENGTH || trimmed === MASK) return;
  remember(trimmed);
  const inJson = JSON.stringify(trimmed).slice(1, -1);
  if (inJson !== trimmed) remember(inJson);
}

function remember(secret: string): void {
  if (knownSecrets.has(secret)) return;
  knownSecrets.add(secret);
  prefixes.add(secret.slice(0, MIN_SCRUB_LENGTH));
  if (!lengths.includes(secret.length)) lengths = [...lengths, secret.length].sort((x, y) => y - x);
  ordered = undefined;
}

const JSON_EXCERPT_MARK = 'is not valid JSON';
/**
 * V8's `Unexpected token 'x', "<excerpt>" is not valid JSON` (`..."<excerpt>"...` for a long input, maybe
 * JSON-escaped in a log line) and `SyntaxError: "<excerpt>" is not valid JSON`. The excerpt may span
 * line breaks; V8 quotes at most 21 characters, so 200 bound it even escaped.
 */
const JSON_EXCERPT =
  /(?:Unexpected token '[^\n]{0,2}',\s*|SyntaxError: )(?:\.\.\.)?\\?"[\s\S]{0,200}?\\?"(?:\.\.\.)?\s*is not valid JSON/g;

/** Forget all registered secrets (tests). */
export function clearRegisteredSecrets(): void {
  knownSecrets.clear();
  prefixes.clear();
  lengths = [];
  ordered = undefined;
}

/**
 * Every registered secret in `text` replaced by {@link MASK}, and the input excerpt of a `JSON.parse`
 * error dropped: such a message travels unwrapped (a stack, a cause) and may quote a credential.
 */
export function scrub(text: string): string {
  if (text.length === 0) return text;
  let out = text.includes(JSON_EXCERPT_MARK)
    ? text.replace(JSON_EXCERPT, (m) =>
        m.startsWith('SyntaxError')
          ? 'SyntaxError: not valid JSON'
          : 'Unexpected token (input excerpt removed)',
      )
    : text;
  if (knownSecrets.size === 0) return out;
  if (knownSecrets.size > SEARCH_EACH_UP_TO) return scrubByScan(out);
  for (const secret of orderedSecrets()) {
    if (out.includes(secret)) out = replaceSecret(out, secret);
  }
  return out;
}

/** A word that names a credential inside free text (`aws_secret_key`, `Password`, `api-key`). */
const SECRET_WORD = String.raw`\b[\w-]*?(?:password|passwd|pwd|secret|private[_-]?key|passphrase|api[_-]?key|access[_-]?key|token)[\w-]*`;
/** `password: "x"`, `"password":"x"`, `passphrase 'x'`: a quoted value after a credential word. */
const QUOTED_SECRET_VALUE = new RegExp(
  String.raw`(${SECRET_WORD}["']?(?:\s*[:=]\s*|\s+))(["'])([^"'\n]+)\2`,
  'gi',
);
/** `password=x`, `aws_secret_key: x`: an unquoted value after a credential word and a separator. */
const BARE_SECRET_VALUE = new RegExp(String.raw`(${SECRET_WORD}\s*[:=]\s*)([^\s"',;}&)\]]+)`, 'gi');

/**
 * {@link scrub} for a service's text, also masking a value after a credential word (`"client_secret":"x"`): a
 * service may echo a credential never registered here. Over-masking an error message is the cheaper mistake.
 */
export function scrubServiceText(text: string): string {
  const masked = text
    .replace(QUOTED_SECRET_VALUE, (_m, lead: string, quote: string) => `${lead}${quote}${MASK}${quote}`)
    .replace(BARE_SECRET_VALUE, (m, lead: string, value: string) => (value === MASK ? m : `${lead}${MASK}`));
  return scrub(masked);
}

/**
 * Credential field names whatever the template says. `credentials` only as the whole name:
 * `is_credential` is a flag (api-notes: `credential_id` comes with `is_credential: true`).
 */
const SECRET_FIELD_PATTERN =
  /(^|_)(password|passwd|pwd|secret|secret_key|aws_secret_key|aws_access_key|access_key|private_key|api_key|apikey|token|client_secret)$|^credentials?$/i;

/** `passphrase` (of a key file) is what the service itself always masks besides the patterns above. */
const SECRET_WORD_IN_NAME = /password|secret|private_?key|token|passphrase/i;

/** True when a field name looks like a credential's; kept by name (every key of every entry asks). */
export const isSecretFieldName: (name: string) => boolean = memoizeBounded(
  (name) => SECRET_FIELD_PATTERN.test(name) || SECRET_WORD_IN_NAME.test(name),
  10_000,
);

/** True when `name` holding `value` is a secret by name; never a boolean or a number (`token_ttl: 3600`). */
export function isSecretByName(name: string, value: unknown): boolean {
  return typeof value !== 'boolean' && typeof value !== 'number' && isSecretFieldName(name);
}

/** True when a value is the service's mask. */
export function isMasked(value: unknown): boolean {
  return value === MASK;
}

/**
 * A copy of a connection-like object with every secret masked at any depth (docs/secrets.md): the
 * `secretFields` (template `x-secret`), fields named like a credential, everything inside such a field,
 * and encrypted custom fields' `field_value`. Empty strings, null and booleans stay. Nested objects are
 * walked: a service may nest credentials (`auth: { client_secret }`) and masks only the keys it knows.
 */
export function maskSecrets<T extends Record<string, unknown>>(
  entry: T,
  secretFields: ReadonlySet<string> = new Set(),
  onMasked?: (value: string | number) => void,
): T {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) {
    assignOwn(out, key, maskValue(value, secretFields.has(key) || isSecretByName(key, value), onMasked));
  }
  return out as T;
}

/** `value` masked: all of it when `secret`, else the secrets inside it; `onMasked` sees each value masked. */
function maskValue(value: unknown, secret: boolean, onMasked?: (value: string | number) => void): unknown {
  if (Array.isArray(value)) return value.map((item) => maskValue(item, secret, onMasked));
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const encrypted = record.field_type === 'encrypted';
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(record)) {
      const innerSecret = secret || isSecretByName(key, inner) || (encrypted && key === 'field_value');
      assignOwn(out, key, maskValue(inner, innerSecret, onMasked));
    }
    return out;
  }
  if (!secret) return value;
  if ((typeof value === 'string' && value !== '') || typeof value === 'number') {
    onMasked?.(value);
    return MASK;
  }
  return typeof value === 'bigint' ? MASK : value;
}

/**
 * Register every secret {@link maskSecrets} would mask: a service may echo what it is sent. Walked
 * without the copy maskSecrets makes: an import registers each entry when it plans and when it sends.
 */
export function registerSecretsOf(
  entry: Readonly<Record<string, unknown>>,
  secretFields: ReadonlySet<string> = new Set(),
): void {
  for (const key of Object.keys(entry)) {
    const value = entry[key];
    visitSecrets(value, secretFields.has(key) || isSecretByName(key, value));
  }
}

/** Register the values {@link maskValue} would mask in `value` (the same walk, nothing copied). */
function visitSecrets(value: unknown, secret: boolean): void {
  if (Array.isArray(value)) {
    for (const item of value) visitSecrets(item, secret);
    return;
  }
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    const encrypted = record.field_type === 'encrypted';
    for (const key of Object.keys(record)) {
      const inner = record[key];
      visitSecrets(inner, secret || isSecretByName(key, inner) || (encrypted && key === 'field_value'));
    }
    return;
  }
  if (secret && ((typeof value === 'string' && value !== '') || typeof value === 'number'))
    registerSecret(String(value));
}

/** A `JSON.parse` error's message without V8's excerpt of the input (it may be a credential). */
export function describeJsonError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const cleaned = message
    // `<what>, "<excerpt>" is not valid JSON` and `<what>, ..."<excerpt>"... is not valid JSON`
    .replace(/,\s*(?:\.\.\.)?".*"(?:\.\.\.)?\s*is not valid JSON\s*$/s, '')
    // `"<excerpt>" is not valid JSON` alone (JSON.parse of a non-string)
    .replace(/^\s*(?:\.\.\.)?".*"(?:\.\.\.)?\s*is not valid JSON\s*$/s, 'not valid JSON')
    // Anything else still quoting the input is cut at the quote.
    .replace(/\s*(?:\.\.\.)?".*$/s, '');
  return cleaned.length > 200 ? `${cleaned.slice(0, 200)}...` : cleaned;
}
