/**
 * One POST of a JSON body with a bearer token over a keep-alive agent, as a bare script sends it: the
 * status, nothing else read. The bare loops of the benches (`bare-post-loop.ts`, `scale-child.ts`) share it.
 */
import { type Agent, request } from 'node:http';

/** POST `body` to `url`; resolves with the status once the answer has ended. */
export function postJson(agent: Agent, url: URL, token: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        agent,
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
