/**
 * The pieces of `--on-conflict update` and `--prune` that need the template catalog: the diff's
 * comparison, the PUT body of an update (masked values left out, so the service keeps the stored
 * secret), the update's pre-flight check, and masked images for the journal.
 */
import {
  dropMaskedValues,
  fillMaskedForCheck,
  findClearSecrets,
  makeSafeImage,
} from '../connections/images.js';
import { findChangedFields } from '../diff/compare.js';
import type { Connection } from '../model/connection.js';
import type { ConvergeHelpers } from './plan.js';
import { checkEntryForSend, type EntryTemplates } from './preflight.js';

/** What {@link createConvergeHelpers} needs of the template catalog. */
export interface ConvergeCatalog extends EntryTemplates {
  secretFields(type: string): ReadonlySet<string>;
}

/** The converge helpers of a plan, bound to a catalog. */
export function createConvergeHelpers(catalog: ConvergeCatalog): ConvergeHelpers {
  const secretFields = (type: string) => catalog.secretFields(type);
  const typeOf = (c: Readonly<Record<string, unknown>>) => (typeof c.type === 'string' ? c.type : '');
  return {
    compare: (entry, target) => findChangedFields(entry.body as Connection, target, secretFields),
    updateBody: (entry) => {
      const { body } = dropMaskedValues(entry.body);
      return { body, secretsSent: findClearSecrets(body, secretFields(entry.type)) };
    },
    checkUpdate: (entry) =>
      checkEntryForSend({ ...entry, body: fillMaskedForCheck(entry.body) }, catalog).problems,
    imageOf: (connection) => makeSafeImage(connection, secretFields(typeOf(connection))),
  };
}
