/** Two arrays of connections through the diff every `diff` runs (the streaming diff), for tests. */
import { createStreamingDiff } from '../../src/diff/stream.js';
import type { DiffOptions, DiffResult } from '../../src/diff/types.js';
import type { Connection } from '../../src/model/connection.js';

export function diffConnections(
  from: Iterable<Connection>,
  to: Iterable<Connection>,
  options: DiffOptions = {},
): DiffResult {
  const differ = createStreamingDiff(options);
  for (const entry of from) differ.add('from', entry);
  for (const entry of to) differ.add('to', entry);
  return differ.finish().result;
}
