/**
 * Secret hygiene. Two mechanisms, both needed:
 * - field-level masking: credential fields of a connection (by template `x-secret`, by name, or values
 *   the service already masked) are replaced by {@link MASK} before anything is printed or stored;
 * - a process-wide registry of known secret strings (tokens, override values read from the environment)
 *   that {@link scrub} removes from any text on its way to stdout, stderr, a log or a report. It is the
 *   last line of defence against a secret echoed back inside a service message.
 */
import { memoizeBounded } from './bounded-memo.js';
import { assignOwn } from './own-property.js';

/** How the service masks a secret, and how dds-migrate shows one. */
export const MASK = '******';

const knownSecrets = new Set<string>();

/**
 * The known secrets, longest first (so that a secret containing another is removed whole); sorted
 * again only after a new one is registered.
 */
let ordered: readonly string[] | undefined;
function orderedSecrets(): readonly string[] {
  ordered ??= [...knownSecrets].sort((a, b) => b.length - a.length);
  return ordered;
}

/**
 * Past this many known secrets, {@link scrub} reads the text once instead of searching it once per
 * secret: an import or a verify of 100 000 sources knows as many secrets, and its 20 MB result searched
 * 100 000 times took minutes.
 */
const SEARCH_EACH_UP_TO = 32;

/**
 * The first {@link MIN_SCRUB_LENGTH} characters of every known secret: a position of a text where
 * none starts is ruled out by one look-up.
 */
const prefixes = new Set<string>();
/** The distinct lengths of the known secrets, longest first. */
let lengths: number[] = [];

/** A secret of digits only (a PIN): see {@link standsAlone}. */
const DIGITS_ONLY = /^[0-9]+$/;

function isDigit(text: string, at: number): boolean {
  const c = text.charCodeAt(at);
  return c >= 0x30 && c <= 0x39;
}

/**
 * Whether the occurrence of `secret` at `at` in `text` is to be removed. A secret of digits only is
 * removed where it stands alone, not inside a longer run of digits: a PIN `453831` is no part of the
 * timestamp `1795447453831` of a log line or of an id, and masking it there made JSON output invalid
 * (a number with `******` in it). Any other secret is removed wherever it occurs.
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

/** Every known secret in `text` replaced, reading it once: at each position the longest secret there. */
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

/** Remember a secret value (token, password from an override) so that {@link scrub} removes it from text. */
export function registerSecret(value: string | undefined | null): void {
  if (typeof value !== 'string') return;
  const trimmed = value.trim();
  if (trimmed.length >= MIN_SCRUB_LENGTH && trimmed !== MASK && !knownSecrets.has(trimmed)) {
    knownSecrets.add(trimmed);
    prefixes.add(trimmed.slice(0, MIN_SCRUB_LENGTH));
    if (!lengths.includes(trimmed.length)) lengths = [...lengths, trimmed.length].sort((x, y) => y - x);
    ordered = undefined;
  }
}

/** What every V8 `JSON.parse` message that quotes its input says. */
const JSON_EXCERPT_MARK = 'is not valid JSON';
/**
 * V8's `Unexpected token 'x', "<excerpt>" is not valid JSON` (or `..."<excerpt>"...` for a long input),
 * also JSON-escaped (`\"`) inside a log line, and `SyntaxError: "<excerpt>" is not valid JSON`. The
 * excerpt ends at the first `" is not valid JSON`, so nothing else of a line is touched. It may span
 * line breaks (V8 quotes the input as it is: a pretty-printed one holds them); V8 quotes at most 21
 * characters (10 on each side of the error, or a shorter input whole), so 200 bound it even escaped.
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
 * Replace every registered secret in `text` with {@link MASK}, and drop the excerpt of the input that
 * V8 quotes in a `JSON.parse` error (`..., "{"password":x..." is not valid JSON`): such a message can
 * travel unwrapped (a stack, a cause) and the excerpt may be a credential nobody registered.
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
 * {@link scrub} for text a service wrote (error messages, an HTML page's title): besides registered
 * secrets, a value that follows a credential word (`password=x`, `"client_secret":"x"`) is masked.
 * A service may echo what it was sent, and a credential it echoes was never registered by a command
 * that did not send it. Over-masking an error message is the cheaper mistake.
 */
export function scrubServiceText(text: string): string {
  const masked = text
    .replace(QUOTED_SECRET_VALUE, (_m, lead: string, quote: string) => `${lead}${quote}${MASK}${quote}`)
    .replace(BARE_SECRET_VALUE, (m, lead: string, value: string) => (value === MASK ? m : `${lead}${MASK}`));
  return scrub(masked);
}

/**
 * Field names that hold credentials whatever the template says. Matching is on the last segment of
 * the key, case-insensitive. Used when no template is known and as a floor under template knowledge.
 * `credentials` counts only as the whole name: `is_credential` and `isCredentialsAuth` are flags
 * (api-notes: `credential_id` comes with `is_credential: true`).
 */
const SECRET_FIELD_PATTERN =
  /(^|_)(password|passwd|pwd|secret|secret_key|aws_secret_key|aws_access_key|access_key|private_key|api_key|apikey|token|client_secret)$|^credentials?$/i;

/** `passphrase` (of a key file) is what the service itself always masks besides the patterns above. */
const SECRET_WORD_IN_NAME = /password|secret|private_?key|token|passphrase/i;

/**
 * True when a field name looks like a credential field. Every key of every entry is asked (masking,
 * secret registration) and entries share their few hundred field names: the verdict is kept by name
 * (two regexes per key cost more than a lookup), for the first 10 000 names.
 */
export const isSecretFieldName: (name: string) => boolean = memoizeBounded(
  (name) => SECRET_FIELD_PATTERN.test(name) || SECRET_WORD_IN_NAME.test(name),
  10_000,
);

/**
 * True when the field `name` holding `value` is a secret by its name ({@link isSecretFieldName}): a
 * boolean or a number is never one by name (`is_credential: true`, `token_required: false`, a
 * `password_max_age` of 90); only the template or the service's own masking makes such a value secret.
 */
export function isSecretByName(name: string, value: unknown): boolean {
  return typeof value !== 'boolean' && typeof value !== 'number' && isSecretFieldName(name);
}

/** True when a value is the service's mask. */
export function isMasked(value: unknown): boolean {
  return value === MASK;
}

/**
 * Return a copy of a connection-like object with every secret masked, at any depth:
 * - top-level fields named in `secretFields` (the template's `x-secret` keys) and, at every level,
 *   fields whose name looks like a credential ({@link isSecretFieldName});
 * - everything inside such a field when it is an object or array (`credentials: {...}`);
 * - the `field_value` of every `field_type: "encrypted"` custom field.
 * A masked value is a non-empty string or a number (a numeric PIN the template declares, or inside a
 * secret subtree); empty strings, null and booleans stay (an empty optional secret is information, not
 * a secret), and a field named like a credential that holds a boolean or a number is not one. Nested objects are
 * walked because a service is free to nest credentials (`auth: { client_secret }`) and only masks the
 * keys it knows.
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

/** Mask `value`: all of it when `secret`, else the secrets found inside it; `onMasked` sees each value masked. */
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
 * Register every secret value of a connection-like object ({@link registerSecret}), found as
 * {@link maskSecrets} finds them: what is about to be sent to a service may be echoed back in its error
 * messages, and {@link scrub} must know it to remove it.
 */
export function registerSecretsOf(
  entry: Readonly<Record<string, unknown>>,
  secretFields: ReadonlySet<string> = new Set(),
): void {
  // Walked without the copy maskSecrets makes: an import registers each entry it checks and sends.
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

/**
 * The message of a `JSON.parse` error without the excerpt of the input V8 quotes in it
 * (`Unexpected token 'x', "{"password":x..." is not valid JSON`, or `..."password":x"...` for a long
 * line): the input may be a line of a snapshot holding a credential, and no message may show one.
 * What is left says what was wrong and where (`in JSON at position N`).
 */
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
