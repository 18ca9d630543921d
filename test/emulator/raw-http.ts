/**
 * A raw HTTP client for the conformance suite: node:http only, no retries, no parsing by
 * content-type, so the tests see exactly what a curl user would (including resets and drops).
 */
import { request as httpRequest } from 'node:http';

/** What came back, or how the connection failed. */
export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  readonly json: unknown;
}

/** Options of {@link send}. */
export interface SendOptions {
  /** JSON-encoded unless a string. */
  readonly body?: unknown;
  /** Full Authorization header value; `null` sends none. Default `Bearer <token>`. */
  readonly auth?: string | null;
  readonly token?: string;
  readonly headers?: Record<string, string>;
}

/** Send one request to `baseUrl` + `path`; rejects with the socket error (ECONNRESET...) when there is no answer. */
export function send(
  baseUrl: string,
  method: string,
  path: string,
  options: SendOptions = {},
): Promise<RawResponse> {
  const url = new URL(path, baseUrl);
  const headers: Record<string, string> = { ...options.headers };
  const auth =
    options.auth === undefined
      ? options.token === undefined
        ? undefined
        : `Bearer ${options.token}`
      : options.auth;
  if (auth !== undefined && auth !== null) headers.authorization = auth;
  let payload: string | undefined;
  if (options.body !== undefined) {
    payload = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** A client bound to one emulator and token. */
export function clientFor(baseUrl: string, token: string) {
  return {
    get: (path: string, options: SendOptions = {}) => send(baseUrl, 'GET', path, { token, ...options }),
    post: (path: string, body: unknown, options: SendOptions = {}) =>
      send(baseUrl, 'POST', path, { token, body, ...options }),
    patch: (path: string, body: unknown, options: SendOptions = {}) =>
      send(baseUrl, 'PATCH', path, { token, body, ...options }),
    put: (path: string, body: unknown, options: SendOptions = {}) =>
      send(baseUrl, 'PUT', path, { token, body, ...options }),
    del: (path: string, options: SendOptions = {}) => send(baseUrl, 'DELETE', path, { token, ...options }),
  };
}

/** A JSON body, read loosely by the assertions. */
// biome-ignore lint/suspicious/noExplicitAny: tests read deep JSON shapes that they then assert on
type Json = Record<string, any>;

/** Shorthand for the JSON body as a record. */
export function obj(r: RawResponse): Json {
  return r.json as Json;
}
