/**
 * The emulator's HTTP server: auth, rate limit, latency and faults around the handlers of
 * `handlers.ts`, plus the record of every request. Only node built-ins.
 */
import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { createGzip, constants as zlibConstants } from 'node:zlib';
import { refusedTokenReply } from './deployment.js';
import { decideFaults, type FaultDecision, parseFaults } from './faults.js';
import {
  type HandlerDeps,
  handle,
  internalError,
  notFound,
  type Reply,
  type RequestContext,
  refreshAccessToken,
} from './handlers.js';
import { createPrng } from './prng.js';
import { TokenBucket } from './rate-limiter.js';
import { createRecord, DEFAULT_MAX_RECORDED } from './record.js';
import {
  checkChoice,
  checkNumber,
  decodeSegments,
  readBody,
  resolveSeed,
  sleep,
  sleepUntil,
} from './server-plumbing.js';
import { SessionTokens } from './session-tokens.js';
import { MemoryStore, StatePersister } from './store.js';
import type { EmulatorOptions, FaultRule, RecordedRequest, RunningEmulator } from './types.js';

const API_PREFIX = '/api/v1';
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const NO_FAULTS: FaultDecision = {
  terminal: null,
  retryAfterSeconds: 1,
  terminalValue: undefined,
  extraLatencyMs: 0,
  htmlContentType: false,
};

/** Defaults of the `=value` of the body faults: ms per byte, MiB. */
const TRICKLE_DEFAULT_MS = 100;
const OVERSIZE_DEFAULT_MIB = 256;
const OVERSIZE_GZIP_DEFAULT_MIB = 512;
const FILL_CHUNK_BYTES = 64 * 1024;

const BAD_GATEWAY_PAGE =
  '<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n' +
  '<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n';

/** Latency and jitter, ms: at most 10 minutes (Node's timer overflows past 2^31 - 1 ms and fires at once). */
const MAX_LATENCY_MS = 600_000;

/** The initial data, and whether it is ours to keep (parsed from a file) or the caller's (to copy). */
/** Start an emulator; resolves once it listens. */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  checkNumber('port', options.port, 0, true);
  checkNumber('latencyMs', options.latencyMs, 0, false, MAX_LATENCY_MS);
  checkNumber('latencyJitterMs', options.latencyJitterMs, 0, false, MAX_LATENCY_MS);
  checkNumber('rateLimit', options.rateLimit, Number.MIN_VALUE);
  checkNumber('rateLimitBurst', options.rateLimitBurst, 1);
  checkNumber('maxPageSize', options.maxPageSize, 1, true);
  checkNumber('defaultPageSize', options.defaultPageSize, 1, true);
  checkNumber('sessionTtlMs', options.sessionTtlMs, 1);
  checkNumber('generate', options.generate, 0, true);
  checkNumber('generateCases', options.generateCases, 0, true);
  checkNumber('maxRecordedRequests', options.maxRecordedRequests, 1, true);
  checkChoice('authRefusal', options.authRefusal, [401, 200]);
  checkChoice('paging', options.paging, ['skip', 'offset', 'none']);
  checkChoice('caseIds', options.caseIds, ['same', 'mongo']);
  checkChoice('profileSources', options.profileSources, ['as-stored', 'names']);
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? 'emulator-token';
  const userToken = options.userToken ?? 'emulator-user-token';
  if (token === '' || userToken === '') throw new Error('Expected token and userToken to be non-empty');
  const seedNumber = options.seed ?? 0x5eed;
  const maxPageSize = options.maxPageSize ?? 1000;
  let faults: FaultRule[] = parseFaults(options.faults);
  let latencyMs = options.latencyMs ?? 0;
  let jitterMs = options.latencyJitterMs ?? latencyMs * 0.1;
  const burst = options.rateLimitBurst;
  const makeBucket = (rps: number | undefined) =>
    rps === undefined ? undefined : new TokenBucket(rps, burst ?? Math.max(1, rps));
  let bucket = makeBucket(options.rateLimit);
  // Separate streams, so turning latency on does not change which requests the faults hit.
  const faultRandom = createPrng(seedNumber);
  const jitterRandom = createPrng(seedNumber ^ 0x9e3779b9);

  const initial = await resolveSeed(options);
  const store = new MemoryStore(initial.seed, !initial.owned);
  if (options.testFailures !== undefined) {
    store.setTestFailures([...(store.toSeedShallow().connectionTestFailures ?? []), ...options.testFailures]);
  }
  const persister =
    options.statePath === undefined
      ? undefined
      : new StatePersister(options.statePath, () => store.toSeedShallow());
  if (persister !== undefined && options.statePath !== undefined && !existsSync(options.statePath)) {
    await persister.persist();
  }
  const record = createRecord(options.maxRecordedRequests ?? DEFAULT_MAX_RECORDED);
  const deps: HandlerDeps = {
    store,
    record,
    sessions: new SessionTokens(options.sessionTtlMs ?? 3_600_000),
    settings: {
      userToken,
      maxPageSize,
      defaultPageSize: Math.min(options.defaultPageSize ?? 100, maxPageSize),
      exportClearSecrets: options.exportClearSecrets ?? false,
      omitEmptyCases: options.omitEmptyCases ?? true,
      testAnswerShape: options.testAnswerShape ?? 'operationStatus',
      referencesApi: options.referencesApi ?? true,
      authRefusal: options.authRefusal ?? 401,
      paging: options.paging ?? 'skip',
      profileSources: options.profileSources ?? 'as-stored',
    },
  };
  const alwaysHtml = options.htmlContentType ?? false;
  const sockets = new Set<Socket>();
  let closed = false;

  function isAuthorized(credential: string | undefined): boolean {
    if (credential === undefined || credential === '') return false;
    return credential === token || deps.sessions.isValid(credential);
  }

  function latencyFor(decision: FaultDecision): number {
    let ms = decision.extraLatencyMs;
    if (latencyMs > 0) ms += Math.max(0, latencyMs + (jitterRandom() * 2 - 1) * jitterMs);
    return ms;
  }

  /** Write `reply`; with `trickleMs` (the `trickle` fault) the body goes out one byte at a time. */
  function send(
    res: ServerResponse,
    rec: RecordedRequest,
    reply: Reply,
    html: boolean,
    trickleMs?: number,
  ): Promise<void> {
    rec.status = reply.status;
    const headers: Record<string, string> = { ...reply.headers };
    let body: Iterable<string>;
    if (reply.text !== undefined) {
      headers['content-type'] = 'text/plain; charset=utf-8';
      headers['www-authenticate'] = 'Bearer';
      headers['content-length'] = String(Buffer.byteLength(reply.text));
      body = [reply.text];
    } else {
      // Some deployments label JSON `text/html`; clients must parse by content.
      headers['content-type'] =
        reply.headers?.['content-type'] ??
        (html ? 'text/html; charset=utf-8' : 'application/json; charset=utf-8');
      if (reply.stream !== undefined) {
        body = reply.stream();
      } else {
        const text = JSON.stringify(reply.json ?? null);
        headers['content-length'] = String(Buffer.byteLength(text));
        body = [text];
      }
    }
    if (trickleMs !== undefined) return sendTrickle(res, reply.status, headers, body, trickleMs);
    if (reply.stream !== undefined) return sendStream(res, reply.status, headers, body);
    res.writeHead(reply.status, headers);
    res.end([...body].join(''));
    return Promise.resolve();
  }

  /** Resolve once `stream` can take more, or is gone. */
  function drained(stream: NodeJS.EventEmitter): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        stream.off('drain', done);
        stream.off('close', done);
        resolve();
      };
      stream.on('drain', done);
      stream.on('close', done);
    });
  }

  /** The `trickle` fault: headers at once, then the body one byte every `msPerByte` ms. */
  async function sendTrickle(
    res: ServerResponse,
    status: number,
    headers: Record<string, string>,
    chunks: Iterable<string>,
    msPerByte: number,
  ): Promise<void> {
    res.writeHead(status, headers);
    res.flushHeaders();
    for (const chunk of chunks) {
      const bytes = Buffer.from(chunk, 'utf8');
      for (let i = 0; i < bytes.length; i++) {
        if (closed || res.destroyed) return;
        res.write(bytes.subarray(i, i + 1));
        await sleep(msPerByte);
      }
    }
    if (!res.destroyed) res.end();
  }

  /**
   * The `oversize` faults: 200 with a valid JSON body of about `mib` MiB, produced as it is sent (never
   * held in memory). Plain: `{"status":"success",...,"data":{"padding":"xxxx..."},...}` with its
   * content-length. Gzip: `content-encoding: gzip`, chunked, a stream that inflates to the envelope
   * followed by `mib` MiB of spaces (well under 1 MiB on the wire for 512 MiB).
   */
  async function sendOversize(
    res: ServerResponse,
    rec: RecordedRequest,
    mib: number,
    gzip: boolean,
    html: boolean,
  ): Promise<void> {
    rec.status = 200;
    const fill = Math.round(mib * 1024 * 1024);
    const head = gzip
      ? '{"status":"success","statusCode":200,"data":{},"message":null'
      : '{"status":"success","statusCode":200,"data":{"padding":"';
    const tail = gzip ? '}' : '"},"message":null}';
    const block = Buffer.alloc(Math.min(FILL_CHUNK_BYTES, Math.max(1, fill)), gzip ? ' ' : 'x');
    const headers: Record<string, string> = {
      'content-type': html ? 'text/html; charset=utf-8' : 'application/json; charset=utf-8',
    };
    if (gzip) headers['content-encoding'] = 'gzip';
    else headers['content-length'] = String(head.length + fill + tail.length);
    res.writeHead(200, headers);
    let sink: NodeJS.WritableStream = res;
    if (gzip) {
      const z = createGzip({ level: 9, strategy: zlibConstants.Z_RLE });
      z.pipe(res);
      res.on('close', () => z.destroy());
      sink = z;
    }
    const gone = () => closed || res.destroyed;
    sink.write(head);
    let left = fill;
    while (left > 0) {
      if (gone()) return;
      const n = Math.min(left, block.length);
      left -= n;
      if (!sink.write(n === block.length ? block : block.subarray(0, n))) await drained(sink);
    }
    if (!gone()) sink.end(tail);
  }

  async function sendStream(
    res: ServerResponse,
    status: number,
    headers: Record<string, string>,
    chunks: Iterable<string>,
  ): Promise<void> {
    res.writeHead(status, headers);
    let buffer = '';
    for (const chunk of chunks) {
      buffer += chunk;
      if (buffer.length < 64 * 1024) continue;
      if (res.destroyed) return;
      const more = res.write(buffer);
      buffer = '';
      if (!more) await drained(res);
    }
    if (!res.destroyed) res.end(buffer);
  }

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const arrived = performance.now();
    const method = (req.method ?? 'GET').toUpperCase();
    const url = new URL(req.url ?? '/', 'http://emulator.invalid');
    const rec = record.addRequest(method, url.pathname, url.search.slice(1));
    const relPath = url.pathname.startsWith(`${API_PREFIX}/`) ? url.pathname.slice(API_PREFIX.length) : null;

    if (bucket !== undefined) {
      const verdict = bucket.take();
      if (!verdict.allowed) {
        rec.fault = '429';
        await send(
          res,
          rec,
          {
            status: 429,
            json: { error: 'Too many requests' },
            headers: { 'retry-after': String(verdict.retryAfterSeconds) },
          },
          alwaysHtml,
        );
        return;
      }
    }

    const decision =
      faults.length > 0 ? decideFaults(faults, method, relPath ?? url.pathname, faultRandom) : NO_FAULTS;
    if (decision.terminal !== null) rec.fault = decision.terminal;
    else if (decision.extraLatencyMs > 0) rec.fault = 'latency';
    else if (decision.htmlContentType) rec.fault = 'html-content-type';
    const html = alwaysHtml || decision.htmlContentType;

    const raw = await readBody(req, MAX_BODY_BYTES);
    // The answer leaves `latency` after the request arrived, the work done meanwhile: a service's
    // latency holds its own work (waiting first and working after made every answer latency + work,
    // and the answers of requests arriving together waited for each other's work at the end).
    const due = arrived + latencyFor(decision);
    const applies =
      decision.terminal === null ||
      decision.terminal === 'commit-then-drop' ||
      decision.terminal === 'commit-then-500' ||
      decision.terminal === 'trickle';
    if (!applies) {
      await sleepUntil(due);
      if (closed || res.destroyed) return;
    }

    switch (decision.terminal) {
      case 'reset':
        // A TCP RST: the client sees ECONNRESET and nothing was applied.
        req.socket.resetAndDestroy();
        return;
      case '500':
        await send(res, rec, internalError('Injected fault: 500 before applying'), html);
        return;
      case 'html-502':
        rec.status = 200;
        res.writeHead(200, {
          'content-type': 'text/html',
          'content-length': String(Buffer.byteLength(BAD_GATEWAY_PAGE)),
        });
        res.end(BAD_GATEWAY_PAGE);
        return;
      case 'oversize':
      case 'oversize-gzip':
        await sendOversize(
          res,
          rec,
          decision.terminalValue ??
            (decision.terminal === 'oversize' ? OVERSIZE_DEFAULT_MIB : OVERSIZE_GZIP_DEFAULT_MIB),
          decision.terminal === 'oversize-gzip',
          html,
        );
        return;
      case '429':
        await send(
          res,
          rec,
          {
            status: 429,
            json: { error: 'Too many requests' },
            headers: { 'retry-after': String(decision.retryAfterSeconds) },
          },
          html,
        );
        return;
      default:
        break;
    }

    if (closed || res.destroyed) return;
    let reply = answer(method, relPath, url, raw, req.headers.authorization, req.headers['content-type']);
    if (reply.mutated === true) {
      rec.applied = true;
      if (persister !== undefined) {
        try {
          await persister.persist();
        } catch (err) {
          reply = internalError(`State could not be saved: ${(err as Error).message}`);
        }
      }
    }
    await sleepUntil(due);
    if (closed || res.destroyed) return;
    if (decision.terminal === 'commit-then-drop') {
      // Applied, but the client never hears: the case a POST must reconcile by name.
      req.socket.destroy();
      return;
    }
    if (decision.terminal === 'commit-then-500') reply = internalError('Injected fault: 500 after applying');
    const trickleMs =
      decision.terminal === 'trickle' ? (decision.terminalValue ?? TRICKLE_DEFAULT_MS) : undefined;
    await send(res, rec, reply, html, trickleMs);
  }

  function answer(
    method: string,
    relPath: string | null,
    url: URL,
    raw: string | null,
    authHeader: string | undefined,
    contentType: string | undefined,
  ): Reply {
    if (relPath === null) return notFound(`No route for ${method} ${url.pathname}`);
    if (raw === null)
      return { status: 413, json: { error: `Request body larger than ${MAX_BODY_BYTES} bytes` } };
    const segments = decodeSegments(relPath);
    if (segments === null) return { status: 400, json: { error: 'Malformed percent-encoding in path' } };
    const credential = authHeader?.replace(/^Bearer\s+/i, '').trim();
    let body: unknown;
    const ctxBase = { method, segments, params: url.searchParams, credential };
    if (method === 'GET' && segments.length === 1 && segments[0] === 'refresh-access-token') {
      return refreshAccessToken({ ...ctxBase, body: undefined }, deps);
    }
    if (!isAuthorized(credential)) return refusedTokenReply(deps.settings.authRefusal);
    if (raw.trim() !== '') {
      // Spec section 5: clients send Content-Type: application/json with a body. A JSON body parser
      // ignores anything else, so a client that forgets it must find out here, not in production.
      if (!/\bjson\b/i.test(contentType ?? '')) {
        return {
          status: 400,
          json: { error: `Expected Content-Type: application/json, got ${contentType ?? 'none'}` },
        };
      }
      try {
        body = JSON.parse(raw);
      } catch {
        return { status: 400, json: { error: 'Request body is not valid JSON' } };
      }
    }
    const ctx: RequestContext = { ...ctxBase, body };
    try {
      return handle(ctx, deps);
    } catch (err) {
      return internalError((err as Error).message);
    }
  }

  const server = createServer((req, res) => {
    onRequest(req, res).catch((err: unknown) => {
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify(internalError(String(err)).json));
      } else {
        res.destroy();
      }
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  if (address === null || typeof address === 'string')
    throw new Error('emulator: no TCP address after listen');
  const urlHost = address.family === 'IPv6' || host.includes(':') ? `[${address.address}]` : host;
  const baseUrl = `http://${urlHost}:${address.port}`;

  let closing: Promise<void> | undefined;
  return {
    url: baseUrl,
    token,
    userToken,
    seed: seedNumber,
    record,
    store,
    close() {
      closing ??= (async () => {
        closed = true;
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const s of sockets) s.destroy();
        await stopped;
        await persister?.flush();
      })();
      return closing;
    },
    setFaults(spec) {
      faults = parseFaults(spec);
    },
    setRateLimit(rps) {
      checkNumber('rateLimit', rps, Number.MIN_VALUE);
      bucket = makeBucket(rps);
    },
    setTestFailures(names) {
      store.setTestFailures(names);
    },
    setLatency(ms) {
      checkNumber('latency', ms, 0, false, MAX_LATENCY_MS);
      latencyMs = ms;
      jitterMs = options.latencyJitterMs ?? ms * 0.1;
    },
  };
}
