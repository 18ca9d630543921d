/** A local port that refuses connections, for the "dead server" tests. */
import { createServer } from 'node:net';

/** A port on 127.0.0.1 that nothing listens on (bound, then released). */
export async function findClosedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
