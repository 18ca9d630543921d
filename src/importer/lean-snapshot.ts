/** The snapshot as an import holds it: lean entries, each body prepared again from its line when needed. */
import { makeSafeImage } from '../connections/images.js';
import { resolveSourceIds, type SourceIdChange } from '../connections/references.js';
import { stripServerManaged } from '../connections/server-managed.js';
import type { Connection } from '../model/connection.js';
import type { TemplateCatalog } from '../schema/catalog.js';
import { registerSecretsOf } from '../secrets.js';
import { HOLD_FOR_REREADS_BYTES } from '../snapshot/placed.js';
import {
  type EntryPlace,
  type IndexedSnapshot,
  indexSnapshot,
  type PlacedSnapshot,
} from '../snapshot/read.js';
import type { SafeImage } from '../sync/journal/records.js';
import type { PlanEntry, PreparedEntry } from '../sync/kinds/connection/kind.js';
import { applyOverrides, type Overrides } from './overrides.js';

/** A snapshot entry as the import holds it: what it is and where its line is (about 200 bytes). */
export interface LeanEntry extends PlanEntry {
  readonly place: EntryPlace;
}

/** The snapshot verified, its entries lean, its scan profiles whole (few). */
export interface LeanSnapshot extends IndexedSnapshot {
  readonly entries: LeanEntry[];
}

/** Read and verify the snapshot in one pass; the caller gets nothing to act on before the trailer. */
export async function readLeanSnapshot(
  path: string,
  signal: AbortSignal,
  onEntry: (entry: Connection) => void,
  holdForRereadsUpTo = HOLD_FOR_REREADS_BYTES,
): Promise<LeanSnapshot> {
  const entries: LeanEntry[] = [];
  const indexed = await indexSnapshot(
    path,
    ({ entry, place }) => {
      onEntry(entry);
      entries.push({
        name: entry.name,
        type: entry.type,
        sourceId: typeof entry._id === 'string' ? entry._id : undefined,
        place,
      });
    },
    { signal, holdForRereadsUpTo },
  );
  return { ...indexed, entries };
}

/**
 * An entry ready to send, read again from the snapshot: server-managed fields and source-environment
 * ids dropped, then overrides applied (an override may set such an id to one of the target's).
 */
export function createPreparer(
  file: PlacedSnapshot,
  overrides: Overrides,
  catalog: TemplateCatalog,
  sourceIdChanges: Map<string, readonly SourceIdChange[]>,
): (entry: PlanEntry) => PreparedEntry {
  return (entry) => {
    const raw = file.reread((entry as LeanEntry).place);
    const resolved = resolveSourceIds(stripServerManaged(raw) as Connection);
    if (resolved.changes.length > 0) sourceIdChanges.set(entry.name, resolved.changes);
    const body = applyOverrides(resolved.body, overrides);
    const secrets = catalog.secretFields(entry.type);
    registerSecretsOf(body, secrets);
    // Made only when journaled (the plan's checks do not ask).
    let image: SafeImage | undefined;
    return {
      name: entry.name,
      type: entry.type,
      sourceId: entry.sourceId,
      body,
      get image(): SafeImage {
        image ??= makeSafeImage(body, secrets);
        return image;
      },
    };
  };
}
