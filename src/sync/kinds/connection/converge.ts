/** What `--on-conflict update` and `--prune` need of a connection, bound to the catalog and overrides. */
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
import type { SecretWritten } from '../../../importer/source.js';
import type { Connection } from '../../../model/connection.js';
import { isMasked } from '../../../secrets.js';
import type { SafeImage } from '../../journal/records.js';
import type { PreparedEntry } from './kind.js';

/** The comparison and image functions `planImport` uses for updates and deletes. */
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
