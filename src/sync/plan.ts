/**
 * The planning rules every kind shares (pure): objects are matched by name (their key); a desired
 * object whose name the target holds is handled as `--on-conflict` says; `--prune` deletes what the
 * target holds beyond the desired state, within the selection; a delete an interrupted run journaled
 * whose object is gone is done. A kind's planner (`importer/plan.ts`, `importer/profile-plan.ts`) adds
 * what is its own: the shape of its steps, its comparison, its bodies.
 */
import { compareNames } from '../connections/match.js';

/** What to do with a desired object whose name already exists in the target; the choices, for option checks. */
export type OnConflict = 'skip' | 'fail' | 'rename' | 'update';
export const ON_CONFLICT_CHOICES: readonly OnConflict[] = ['skip', 'fail', 'rename', 'update'];

/**
 * The name a renamed object gets: `<name> (2)`, `<name> (3)`, ... the first one taken by nobody (target,
 * snapshot, or an earlier rename). Parentheses, digits and a space keep it within the service's name
 * pattern `^[\w\-\s\(\):]+$`.
 */
export function chooseRenamedName(name: string, taken: ReadonlySet<string>): string {
  for (let n = 2; ; n++) {
    const candidate = `${name} (${n})`;
    if (!taken.has(candidate)) return candidate;
  }
}

/** What `--on-conflict` makes of a desired object whose name the target holds. */
export type ExistingDecision =
  | { readonly kind: 'exists' | 'conflict' | 'update' }
  | { readonly kind: 'rename'; readonly targetName: string };

/**
 * `skip` -> `exists` (left alone), `fail` -> `conflict` (a pre-flight problem), `update` -> compared by
 * the kind, `rename` -> created under {@link chooseRenamedName}, which is added to `taken`.
 */
export function decideExisting(name: string, onConflict: OnConflict, taken: Set<string>): ExistingDecision {
  if (onConflict !== 'rename')
    return { kind: onConflict === 'skip' ? 'exists' : onConflict === 'fail' ? 'conflict' : 'update' };
  const targetName = chooseRenamedName(name, taken);
  taken.add(targetName);
  return { kind: 'rename', targetName };
}

/**
 * `--prune`: the target's objects (`extra`: those the desired state does not hold) that are `selected`,
 * in name order.
 */
export function prunable<T extends { readonly name: string }>(
  extra: Iterable<T>,
  selected: (object: T) => boolean,
): T[] {
  return [...extra].filter(selected).sort((a, b) => compareNames(a.name, b.name));
}

/**
 * The deletes an interrupted run journaled (done, or in doubt) whose object the target no longer holds:
 * reported as done, in name order. `isDelete` says which journal states are deletes not failed.
 */
export function journaledDeletes<S>(
  states: Iterable<readonly [string, S]>,
  isDelete: (state: S) => boolean,
  inTarget: (name: string) => boolean,
  selected: (name: string, state: S) => boolean,
): (readonly [string, S])[] {
  return [...states]
    .filter(([name, state]) => isDelete(state) && !inTarget(name) && selected(name, state))
    .sort(([a], [b]) => compareNames(a, b));
}
