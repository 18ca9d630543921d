/**
 * What `--on-conflict update` and `--prune` need of a connection, bound to the template catalog and the
 * overrides: the diff's comparison, the PUT body of an update with masked values left out so that the
 * service keeps the stored secret, the update's pre-flight check, masked images for the journal.
 */
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

/** The comparison and image functions `planImport` (`kind.ts`) uses for updates and deletes. */
export interface ConvergeHelpers {
  /** The fields that differ between the entry's body and the target's connection (diff's comparison). */
  compare(entry: PreparedEntry, target: Connection): readonly FieldChange[];
  /** The PUT body of an entry and the secrets it sends in clear. */
  updateBody(entry: PreparedEntry): { body: Record<string, unknown>; secretsSent: readonly string[] };
  /** The secrets an update of the entry writes, and where each value comes from. */
  secretsWritten(entry: PreparedEntry): readonly SecretWritten[];
  /** Problems that would stop the update being sent (a masked secret is kept by the service, not one). */
  checkUpdate(entry: PreparedEntry): readonly Problem[];
  /** A connection with every secret masked. */
  imageOf(connection: Readonly<Record<string, unknown>>): SafeImage;
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
