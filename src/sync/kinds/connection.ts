/**
 * The connection kind: keyed by name; how the executor writes a data source connection
 * (`/ds_connections`: spec 4.x, api-notes [code]); and what `--on-conflict update` and `--prune` need
 * of it, bound to the template catalog: the diff's comparison, the PUT body of an update (masked values
 * left out, so the service keeps the stored secret), the update's pre-flight check, and masked images
 * for the journal.
 */
import {
  createConnection,
  deleteConnection,
  getConnectionByName,
  updateConnection,
} from '../../api/connections.js';
import type { HttpClient } from '../../api/http.js';
import {
  dropMaskedValues,
  fillMaskedForCheck,
  findClearSecrets,
  makeSafeImage,
} from '../../connections/images.js';
import { findChangedFields } from '../../diff/compare.js';
import { valueAtComparedPath } from '../../diff/normalize.js';
import { EMPTY_OVERRIDES, type Overrides, overrideSets } from '../../importer/overrides.js';
import type { ConvergeHelpers } from '../../importer/plan.js';
import { checkEntryForSend, type EntryTemplates } from '../../importer/preflight.js';
import type { Connection } from '../../model/connection.js';
import { isMasked } from '../../secrets.js';
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

/** The converge helpers of a plan, bound to a catalog and the overrides (where a secret comes from). */
export function createConvergeHelpers(
  catalog: EntryTemplates & { secretFields(type: string): ReadonlySet<string> },
  overrides: Overrides = EMPTY_OVERRIDES,
): ConvergeHelpers {
  const secretFields = (type: string) => catalog.secretFields(type);
  const typeOf = (c: Readonly<Record<string, unknown>>) => (typeof c.type === 'string' ? c.type : '');
  const updateBody: ConvergeHelpers['updateBody'] = (entry) => {
    const { body } = dropMaskedValues(entry.body);
    return { body, secretsSent: findClearSecrets(body, secretFields(entry.type)) };
  };
  return {
    // A field whose snapshot value is masked is left out of the PUT (the service keeps what it holds),
    // so it cannot justify an update: counted as one, the same update was planned on every run.
    compare: (entry, target) =>
      findChangedFields(entry.body as Connection, target, secretFields).filter(
        (field) => !isMasked(valueAtComparedPath(entry.body, field.path)),
      ),
    updateBody,
    secretsWritten: (entry) => {
      const { body, secretsSent } = updateBody(entry);
      return secretsSent.map((path) => ({
        path,
        from: overrideSets(entry, body, path, overrides) ? 'overrides' : 'snapshot',
      }));
    },
    // The entry's own fields, not a spread: a prepared entry makes its safe image when asked.
    checkUpdate: (entry) =>
      checkEntryForSend(
        {
          name: entry.name,
          type: entry.type,
          sourceId: entry.sourceId,
          body: fillMaskedForCheck(entry.body),
        },
        catalog,
      ).problems,
    imageOf: (connection) => makeSafeImage(connection, secretFields(typeOf(connection))),
  };
}
