/**
 * Reading what the service answered: bodies parsed by content (whatever the content-type says), error
 * envelopes on a 2xx, and the service's own error text, scrubbed and kept short.
 */

import { isRecord } from '../own-property.js';
import { maskSecrets, scrubServiceText } from '../secrets.js';

/**
 * Pull the service's own error text out of a body: `error`, `message` or `errors[]` (spec section 7),
 * looked for at the top and inside `data`. Plain text bodies (a 401 answers with text) are kept short.
 */
export function extractServiceMessage(body: unknown): string | undefined {
  if (typeof body === 'string') {
    const text = body.trim();
    if (text === '') return undefined;
    if (looksLikeHtml(text)) return describeHtml(text);
    // Scrubbed before it is cut: a cut through a secret would leave a prefix no scrub recognises.
    return truncate(scrubServiceText(text), 300);
  }
  if (!isRecord(body)) return undefined;
  const record = body;
  const parts: string[] = [];
  if (typeof record.error === 'string' && record.error) parts.push(record.error);
  else if (record.error && typeof record.error === 'object') {
    const inner = record.error as Record<string, unknown>;
    if (typeof inner.message === 'string') parts.push(inner.message);
  }
  if (parts.length === 0 && typeof record.message === 'string' && record.message) parts.push(record.message);
  if (Array.isArray(record.errors)) {
    for (const item of record.errors) {
      if (typeof item === 'string') parts.push(item);
      else if (item && typeof item === 'object') {
        const e = item as Record<string, unknown>;
        const text = e.message ?? e.error ?? e.msg;
        parts.push(typeof text === 'string' ? text : describeErrorItem(e));
      }
    }
  }
  if (parts.length === 0 && record.data && typeof record.data === 'object') {
    return extractServiceMessage(record.data);
  }
  if (parts.length === 0) return undefined;
  return truncate(scrubServiceText([...new Set(parts)].join('; ')), 500);
}

/** Keys under which a validation error repeats the offending input (`{field:"password", value:"..."}`). */
const ECHO_KEYS: ReadonlySet<string> = new Set(['value', 'values', 'input', 'received', 'data', 'body']);

/**
 * An `errors[]` item without a message, shown whole, minus the input it echoes and anything named
 * like a credential: the field it names may be a password, which only the key next to it says.
 */
function describeErrorItem(item: Record<string, unknown>): string {
  const shown = Object.entries(maskSecrets(item)).filter(([key]) => !ECHO_KEYS.has(key));
  return JSON.stringify(Object.fromEntries(shown));
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}...` : text;
}

export function looksLikeHtml(text: string): boolean {
  return /^<(!doctype|html|head|body|\?xml|[a-z])/i.test(text.trimStart());
}

export function describeHtml(text: string): string {
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]?.trim();
  const h1 = /<h1[^>]*>([^<]*)<\/h1>/i.exec(text)?.[1]?.trim();
  const said = title || h1 ? truncate(scrubServiceText(title || h1 || ''), 200) : undefined;
  return said
    ? `the service answered with an HTML page ("${said}") instead of JSON`
    : 'the service answered with an HTML page instead of JSON';
}

/** The text of a non-JSON body, described: an HTML page by its title, anything else in general. */
export function describeHtmlOrText(text: string): string {
  return looksLikeHtml(text) ? describeHtml(text) : 'the service answered with a body that is not JSON';
}

/** A body that is not JSON, as text. */
export class NotJson {
  constructor(readonly text: string) {}
}

/** Parse a body by content: empty -> undefined, JSON -> value, anything else -> a {@link NotJson}. */
export function parseBody(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return new NotJson(trimmed);
  }
}

/** True when a JSON body says it failed although the status said success. */
export function isErrorEnvelope(body: unknown): boolean {
  return isRecord(body) && (body.success === false || body.status === 'error');
}
