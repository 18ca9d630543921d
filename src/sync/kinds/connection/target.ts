/**
 * What an import reads of its target before it plans: the connections (each compared with its
 * snapshot entry as its page arrives, when updates or deletes need it: never the whole listing held,
 * only what planning needs of each), and the update checks that name references.
 */
import { listConnectionPages } from '../../../api/connections.js';
import type { HttpClient } from '../../../api/http.js';
import { checkEntryReferences, type TargetReferences } from '../../../connections/references.js';
import type { FieldChange } from '../../../diff/types.js';
import type { NameSelection } from '../../../importer/selection.js';
import { held } from '../../../importer/source.js';
import type { Connection } from '../../../model/connection.js';
import type { OnConflict } from '../../plan.js';
import type { ConvergeHelpers } from './converge.js';
import type { PlanEntry, PreparedEntry, TargetConnection } from './kind.js';

/**
 * An update's body names references too: the pre-flight checks them as it does for creates. A refused
 * update's references count among the run's (`onRefused`), as a refused create's do.
 */
export function withReferenceChecks(
  helpers: ConvergeHelpers,
  target: TargetReferences,
  onRefused: (entry: PreparedEntry) => void,
): ConvergeHelpers {
  return {
    ...helpers,
    checkUpdate: (entry) => {
      const problems = [...helpers.checkUpdate(entry), ...checkEntryReferences(entry, target)];
      if (problems.length > 0) onRefused(entry);
      return problems;
    },
  };
}

/**
 * The target's connections: names and ids, or, when updates or deletes need more (`summarize`), what
 * {@link targetSummarizer} keeps of each as its page arrives (never the whole listing at once).
 */
export async function listTarget(
  client: HttpClient,
  signal: AbortSignal,
  summarize?: (connection: Connection) => TargetConnection,
): Promise<TargetConnection[]> {
  const out: TargetConnection[] = [];
  for await (const page of listConnectionPages(client, { signal }))
    for (const c of page)
      out.push(
        summarize !== undefined
          ? summarize(c)
          : { name: c.name, _id: typeof c._id === 'string' ? c._id : undefined },
      );
  return out;
}

const NO_FIELDS: readonly FieldChange[] = [];

/**
 * What planning keeps of a target connection as it is listed: its name and id; compared with its
 * snapshot entry (`--on-conflict update`), the fields that differ, and its image only when some do;
 * without an entry (`--prune`), its type and image; outside `--only`, nothing more. The plan is the
 * one it would be with the whole connection kept.
 */
export function targetSummarizer(
  entries: readonly PlanEntry[],
  prepare: (entry: PlanEntry) => PreparedEntry,
  options: {
    readonly onConflict: OnConflict;
    readonly prune?: boolean;
    readonly only?: NameSelection | undefined;
  },
  converge: Pick<ConvergeHelpers, 'compare' | 'imageOf'>,
): (connection: Connection) => TargetConnection {
  const byName = new Map<string, PlanEntry>();
  // The first of a name, as the plan pairs them (a snapshot's reader refuses a second one anyway).
  for (const entry of entries) if (!byName.has(entry.name)) byName.set(entry.name, entry);
  // Object literals, not spreads of a common base: in V8 each `{ ...base, key }` gets a hidden class of
  // its own, and a summary is held for every connection of the target until the run ends.
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
      // Paths only: the values may be long, and are not shown.
      const compared = found.map((f) => ({ path: f.path }));
      return { name, _id, compared, before: held(converge.imageOf(connection)) };
    }
    if (options.prune !== true) return { name, _id };
    return { name, _id, type, before: held(converge.imageOf(connection)) };
  };
}
