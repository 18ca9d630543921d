/** What the service answered: bodies parsed by content, error envelopes on a 2xx, its error text scrubbed. */

import { MAX_DOCUMENT_DEPTH, nestsTooDeep } from '../json-depth.js';
import { isRecord } from '../own-property.js';
import { maskSecrets, scrubServiceText } from '../secrets.js';

/** The service's error text: `error`, `message` or `errors[]` (spec 7), at top or in `data`; text capped. */
export function extractServiceMessage(body: unknown): string | undefined {
  if (typeof body === 'string') {
    const text = body.trim();
    if (text === '') return undefined;
    if (looksLikeHtml(text)) return describeHtml(text);
    // Scrubbed before it is cut: a cut through a secret would leave a prefix no scrub recognises.
    return truncate(scrubServiceText(text), 300);
  }
  if (!isRecord(body)) return undefined;
  const parts: string[] = [];
  if (typeof body.error === 'string' && body.error) parts.push(body.error);
  else if (isRecord(body.error) && typeof body.error.message === 'string') parts.push(body.error.message);
  if (parts.length === 0 && typeof body.message === 'string' && body.message) parts.push(body.message);
  if (Array.isArray(body.errors)) {
    for (const item of body.errors) {
      if (typeof item === 'string') parts.push(item);
      else if (item && typeof item === 'object') {
        const e = item as Record<string, unknown>;
        const text = e.message ?? e.error ?? e.msg;
        parts.push(typeof text === 'string' ? text : describeErrorItem(e));
      }
    }
  }
  if (parts.length === 0 && isRecord(body.data)) return extractServiceMessage(body.data);
  if (parts.length === 0) return undefined;
  return truncate(scrubServiceText([...new Set(parts)].join('; ')), 500);
}

/** Keys under which a validation error repeats the offending input (`{field:"password", value:"..."}`). */
const ECHO_KEYS: ReadonlySet<string> = new Set(['value', 'values', 'input', 'received', 'data', 'body']);

/** An `errors[]` item without a message, minus the input it echoes and anything named like a credential. */
function describeErrorItem(item: Record<string, unknown>): string {
  const shown = Object.entries(maskSecrets(item)).filter(([key]) => !ECHO_KEYS.has(key));
  return JSON.stringify(Object.fromEntries(shown));
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}...` : text;
}

function looksLikeHtml(text: string): boolean {
  return /^<(!doctype|html|head|body|\?xml|[a-z])/i.test(text.trimStart());
}

function describeHtml(text: string): string {
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(text)?.[1]?.trim();
  const h1 = /<h1[^>]*>([^<]*)<\/h1>/i.exec(text)?.[1]?.trim();
  const said = title || h1 ? truncate(scrubServiceText(title || h1 || ''), 200) : undefined;
  return said
    ? `the service answered with an HTML page ("${said}") instead of JSON`
    : 'the service answered with an HTML page instead of JSON';
}

/** A non-JSON body described: an HTML page by its title, anything else in general. */
export function describeHtmlOrText(text: string): string {
  return looksLikeHtml(text) ? describeHtml(text) : 'the service answered with a body that is not JSON';
}

/** A body that is not JSON (or JSON nested too deeply to use: `why` says so), as text. */
export class NotJson {
  constructor(
    readonly text: string,
    readonly why?: string,
  ) {}
}

/** Parse a body by content: empty -> undefined, JSON -> value, anything else -> a {@link NotJson}. */
export function parseBody(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(trimmed) as unknown;
  } catch {
    return new NotJson(trimmed);
  }
  if (nestsTooDeep(value, trimmed.length, MAX_DOCUMENT_DEPTH)) {
    return new NotJson(
      '',
      `the service answered with JSON nested more than ${MAX_DOCUMENT_DEPTH} levels deep`,
    );
  }
  return value;
}

/** True when a JSON body says it failed although the status said success. */
export function isErrorEnvelope(body: unknown): boolean {
  return isRecord(body) && (body.success === false || body.status === 'error');
}
