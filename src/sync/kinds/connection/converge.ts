/** What `--on-conflict update` and `--prune` need: helpers, and a summary of each target connection. */
import {
  dropMaskedValues,
  fillMaskedForCheck,
  findClearSecrets,
  makeSafeImage,
} from '../../../connections/images.js';
import { findChangedFields } from '../../../diff/compare.js';
import { valueAtComparedPath } from '../../../diff/normalize.js';
import type { FieldChange } from '../../../diff/types.js';
import type { Problem } from '../../../errors.js';
import { EMPTY_OVERRIDES, type Overrides, overrideSets } from '../../../importer/overrides.js';
import { checkEntryForSend, type EntryTemplates } from '../../../importer/preflight.js';
import { held, type SecretWritten } from '../../../importer/source.js';
import type { Connection } from '../../../model/connection.js';
import { isMasked } from '../../../secrets.js';
import type { SafeImage } from '../../journal/records.js';
import type { PlanEntry, PlanInput, PreparedEntry, TargetConnection } from './kind.js';

/** What `planImport` uses for updates and deletes. */
export interface ConvergeHelpers {
  /** The diff's comparison of the entry's body with the target's connection. */
  compare(entry: PreparedEntry, target: Connection): readonly FieldChange[];
  /** The PUT body, masked values left out so the service keeps the stored secret. */
  updateBody(entry: PreparedEntry): { body: Record<string, unknown>; secretsSent: readonly string[] };
  secretsWritten(entry: PreparedEntry): readonly SecretWritten[];
  /** A masked secret is no problem here: the service keeps the one it holds. */
  checkUpdate(entry: PreparedEntry): readonly Problem[];
  imageOf(connection: Readonly<Record<string, unknown>>): SafeImage;
}

/** The converge helpers, bound to a catalog and the overrides (where a secret comes from). */
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
    // A masked field is left out of the PUT, so it cannot justify an update (else one on every run).
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
    checkUpdate: ({ name, type, sourceId, body }) =>
      checkEntryForSend({ name, type, sourceId, body: fillMaskedForCheck(body) }, catalog).problems,
    imageOf: (connection) => makeSafeImage(connection, secretFields(typeOf(connection))),
  };
}

const NO_FIELDS: readonly FieldChange[] = [];

/**
 * What planning keeps of a listed target connection (all the plan needs): name and id; with an entry under
 * `--on-conflict update`, the differing fields and, if any, image; without one under `--prune`, type and image.
 */
export function targetSummarizer(
  entries: readonly PlanEntry[],
  prepare: (entry: PlanEntry) => PreparedEntry,
  options: Pick<PlanInput, 'onConflict' | 'prune' | 'only'>,
  converge: Pick<ConvergeHelpers, 'compare' | 'imageOf'>,
): (connection: Connection) => TargetConnection {
  const byName = new Map<string, PlanEntry>();
  // The first of a name, as the plan pairs them.
  for (const entry of entries) if (!byName.has(entry.name)) byName.set(entry.name, entry);
  // Literals, not spreads: V8 gives each `{ ...base, key }` its own hidden class; summaries live to the end.
  return (connection) => {
    const name = connection.name;
    const _id = typeof connection._id === 'string' ? connection._id : undefined;
    const type = typeof connection.type === 'string' ? connection.type : '';
    if (options.only !== undefined && !options.only.has(name, type)) return { name, _id };
    const twin = byName.get(name);
    if (twin !== undefined) {
      if (options.onConflict !== 'update') return { name, _id };
      const found = converge.compare(prepare(twin), connection);
      if (found.length === 0) return { name, _id, compared: NO_FIELDS };
      // Paths only: the values may be long and are not shown.
      const compared = found.map((f) => ({ path: f.path }));
      return { name, _id, compared, before: held(converge.imageOf(connection)) };
    }
    if (options.prune !== true) return { name, _id };
    return { name, _id, type, before: held(converge.imageOf(connection)) };
  };
}
