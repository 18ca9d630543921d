/**
 * Another writer between two list pages: a loopback proxy in front of an emulator that runs a change
 * before it forwards the n-th list request, and requests sent to the emulator itself.
 */
import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningEmulator } from '../../src/emulator/index.js';

const LIST = '/api/v1/ds-connections';

/** Send one request to the emulator itself (what another writer does); its status. */
export function direct(emu: RunningEmulator, method: string, path: string, body?: unknown): Promise<number> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      `${emu.url}${path}`,
      {
        method,
        headers: {
          authorization: `Bearer ${emu.token}`,
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Forward `req` to `emu` as it is and its answer back (`body`: the request's body, when already read). */
export function forward(
  emu: RunningEmulator,
  req: IncomingMessage,
  res: ServerResponse,
  body?: Buffer,
): void {
  const upstream = request(`${emu.url}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
    res.writeHead(answer.statusCode ?? 502, answer.headers);
    answer.pipe(res);
  });
  if (body === undefined) req.pipe(upstream);
  else upstream.end(body);
}

/**
 * A proxy to `emu` that runs `change(n)` before it forwards the n-th list request (1-based); its URL and
 * a function that closes it.
 */
export async function proxyOf(
  emu: RunningEmulator,
  change: (n: number) => Promise<void>,
): Promise<{ readonly url: string; close(): Promise<void> }> {
  let lists = 0;
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.method === 'GET' && req.url?.split('?')[0] === LIST) {
        lists += 1;
        await change(lists);
      }
      forward(emu, req, res);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
