/**
 * What an import's plan keeps of each connection of the target as it is listed (pure): compared with
 * its snapshot entry as its page arrives, so that what is held does not grow with the target.
 */
import type { FieldChange } from '../diff/types.js';
import type { Connection } from '../model/connection.js';
import type { ConvergeHelpers, PreparedEntry, TargetConnection } from './plan.js';
import type { NameSelection } from './selection.js';
import { fieldAt, held } from './source.js';

/** What {@link summarizeTarget} needs to know of the run. */
export interface TargetSummaryRules {
  /** `--on-conflict update`: a connection the snapshot also holds is compared with its entry. */
  readonly update: boolean;
  /** `--prune`: a connection the snapshot does not hold keeps its image (its delete journals it). */
  readonly prune: boolean;
  /** `--only`: a name outside it is neither updated nor deleted. */
  readonly only: NameSelection | undefined;
  /** The snapshot's entry of that name, prepared, when the snapshot holds one. */
  readonly twin: (name: string) => (() => PreparedEntry) | undefined;
  readonly converge: Pick<ConvergeHelpers, 'compare' | 'imageOf'>;
}

const NO_FIELDS: readonly FieldChange[] = [];

/**
 * What planning keeps of a target connection as it is listed: its name and id; compared with its
 * snapshot entry (`update`), the fields that differ, and its image only when some do; without an entry
 * (`prune`), its type and image. The plan is the one it would be with the whole connection kept.
 */
export function summarizeTarget(connection: Connection, rules: TargetSummaryRules): TargetConnection {
  // Object literals, not spreads of a common base: in V8 each `{ ...base, key }` gets a hidden class of
  // its own, and a summary is held for every connection of the target until the run ends.
  const name = connection.name;
  const _id = typeof connection._id === 'string' ? connection._id : undefined;
  if (rules.only !== undefined && !rules.only.has(name, typeOf(connection))) return { name, _id };
  const twin = rules.twin(name);
  if (twin !== undefined) {
    if (!rules.update) return { name, _id };
    const found = rules.converge.compare(twin(), connection);
    if (found.length === 0) return { name, _id, compared: NO_FIELDS };
    // Paths only, one object per path shared by every step: the values may be long, and are not shown.
    const compared = found.map((f) => fieldAt(f.path));
    return { name, _id, compared, before: held(rules.converge.imageOf(connection)) };
  }
  if (!rules.prune) return { name, _id };
  return {
    name,
    _id,
    type: typeOf(connection),
    before: held(rules.converge.imageOf(connection)),
  };
}

function typeOf(connection: Connection): string {
  return typeof connection.type === 'string' ? connection.type : '';
}
