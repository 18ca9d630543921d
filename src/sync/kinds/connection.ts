/**
 * The connection kind: how the executor writes a data source connection (`/ds_connections`, keyed by
 * name: spec 4.x, api-notes [code]) and how a journal image of one is made.
 */
import {
  createConnection,
  deleteConnection,
  getConnectionByName,
  updateConnection,
} from '../../api/connections.js';
import type { HttpClient } from '../../api/http.js';
import type { KindWriter } from '../execute.js';

/** The executor's writer of connections, bound to `client`. */
export function connectionWriter(client: HttpClient): KindWriter {
  return {
    // The user's Ctrl-C does not abort a POST in flight: it settles and is journaled.
    create: async (body) => (await createConnection(client, { ...body }))._id,
    update: async (target, body, signal) =>
      (await updateConnection(client, target.name, { ...body }, { signal })).kind === 'absent'
        ? 'absent'
        : 'applied',
    remove: async (target, signal) =>
      (await deleteConnection(client, target.name, { signal })).kind === 'absent' ? 'absent' : 'applied',
    lookup: async (name, signal) => {
      const found = await getConnectionByName(client, name, { signal });
      const id = typeof found?._id === 'string' ? found._id : undefined;
      return found === undefined ? undefined : { id, createdAt: found.created_at };
    },
  };
}
