/**
 * What an import reads of its target before it plans: the connections (each compared with its
 * snapshot entry as its page arrives, when updates or deletes need it: never the whole listing held),
 * and the update checks that name references.
 */
import { listConnectionPages } from '../api/connections.js';
import type { HttpClient } from '../api/http.js';
import { checkEntryReferences, type TargetReferences } from '../connections/references.js';
import { displayName } from '../display-name.js';
import { UsageError } from '../errors.js';
import type { Connection } from '../model/connection.js';
import type { ImportOptions } from './import-types.js';
import type { ConvergeHelpers, PlanEntry, PreparedEntry, TargetConnection } from './plan.js';
import { summarizeTarget, type TargetSummaryRules } from './plan-target.js';
import type { ImportSelection } from './selection.js';

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
 * {@link summarizeTarget} keeps of each as its page arrives (never the whole listing at once).
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

/** {@link summarizeTarget} for this run: its snapshot entries by name, prepared when compared. */
export function targetSummarizer(
  entries: readonly PlanEntry[],
  prepare: (entry: PlanEntry) => PreparedEntry,
  options: Pick<ImportOptions, 'onConflict' | 'prune' | 'only'>,
  converge: ConvergeHelpers,
): (connection: Connection) => TargetConnection {
  const byName = new Map<string, PlanEntry>();
  // The first of a name, as the plan pairs them (a snapshot's reader refuses a second one anyway).
  for (const entry of entries) if (!byName.has(entry.name)) byName.set(entry.name, entry);
  const rules: TargetSummaryRules = {
    update: options.onConflict === 'update',
    prune: options.prune === true,
    only: options.only,
    twin: (name) => {
      const entry = byName.get(name);
      return entry === undefined ? undefined : () => prepare(entry);
    },
    converge,
  };
  return (connection) => summarizeTarget(connection, rules);
}

/**
 * Check `--only` against the snapshot's names (connections and scan profiles; with `--prune`, the
 * target's too): each item must match one of them (a name, or a glob matching some).
 */
export function checkOnly(
  only: ImportSelection | undefined,
  entries: readonly { readonly name: string }[],
  profileNames: readonly string[] = [],
): void {
  if (only?.items === undefined) return;
  const names = [...new Set([...entries.map((e) => e.name), ...profileNames])];
  const unknown = only.items.filter((item) => !names.some((name) => only.matches(item, name)));
  if (unknown.length > 0) {
    throw new UsageError(
      `--only names connections that are not in the snapshot: ${unknown.map(displayName).join(', ')}`,
      { hint: 'Check the names (they are case-sensitive; a glob such as finance-* must match one)' },
    );
  }
}
