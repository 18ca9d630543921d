/** What an import reads of its target's connections before it plans, and the update's reference checks. */
import { listConnectionPages } from '../../../api/connections.js';
import type { HttpClient } from '../../../api/http.js';
import type { FieldChange } from '../../../diff/types.js';
import type { NameSelection } from '../../../importer/selection.js';
import { held } from '../../../importer/source.js';
import type { Connection } from '../../../model/connection.js';
import type { OnConflict } from '../../plan.js';
import type { ConvergeHelpers } from './converge.js';
import type { PlanEntry, PreparedEntry, TargetConnection } from './kind.js';

/** The target's connections: names and ids, or what `summarize` keeps of each as its page arrives. */
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
 * What planning keeps of a target connection as it is listed: name and id; with an entry under
 * `--on-conflict update`, the fields that differ and, when some do, its image; without one under
 * `--prune`, its type and image. The plan is the one the whole connection would give.
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
  // The first of a name, as the plan pairs them.
  for (const entry of entries) if (!byName.has(entry.name)) byName.set(entry.name, entry);
  // Literals, not spreads of a base: V8 gives each `{ ...base, key }` a hidden class of its own, and a
  // summary is held for every connection of the target until the run ends.
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
