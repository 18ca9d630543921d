/**
 * The one planner of every kind (pure): desired and actual objects in, steps out, so `--dry-run` prints
 * the steps the run executes. Per desired object within the selection, in name order:
 * 1. a second object of a name -> the kind's `duplicate` step (a kind without one plans it again);
 * 2. the interrupted run being finished wrote it (see `resumes`) and the target holds it -> `done`;
 * 3. the kind's own checks (`gate`: a scan profile's one-time scan, its references) may decide it;
 * 4. that run's create has no outcome -> `in-doubt`, with the target's object of the name it sent;
 * 5. under `--on-conflict rename`, an earlier run created it under another name the target holds -> `exists`;
 * 6. its name exists in the target -> as `--on-conflict` says ({@link decideExisting}); 7. else -> `create`.
 * With `prune`: each target object not desired (within the selection) -> the kind's delete, in name
 * order; then each delete that run journaled (done or in doubt) whose object is gone -> `removed`.
 */
import { compareNames } from '../connections/match.js';
import { assertNever } from '../errors.js';
import type { JournalOp } from './journal/records.js';

/** How many of `steps` are of each of `kinds` (every one named, in that order). */
export function countSteps<K extends string>(
  steps: readonly { readonly kind: K }[],
  kinds: readonly K[],
): Record<K, number> {
  const counts = Object.fromEntries(kinds.map((k) => [k, 0])) as Record<K, number>;
  for (const s of steps) if (s.kind in counts) counts[s.kind] += 1;
  return counts;
}

/** What to do with a desired object whose name already exists in the target. */
export type OnConflict = 'skip' | 'fail' | 'rename' | 'update';
/** The choices of {@link OnConflict}, for option checks. */
export const ON_CONFLICT_CHOICES: readonly OnConflict[] = ['skip', 'fail', 'rename', 'update'];

/** The first `<name> (n)`, n >= 2, not `taken`: within the service's name pattern `^[\w\-\s\(\):]+$`. */
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

/** What `--on-conflict` makes of a name the target holds; a rename's new name is added to `taken`. */
export function decideExisting(name: string, onConflict: OnConflict, taken: Set<string>): ExistingDecision {
  switch (onConflict) {
    case 'skip':
      return { kind: 'exists' };
    case 'fail':
      return { kind: 'conflict' };
    case 'update':
      return { kind: 'update' };
    case 'rename': {
      const targetName = chooseRenamedName(name, taken);
      taken.add(targetName);
      return { kind: 'rename', targetName };
    }
    default:
      return assertNever(onConflict, '--on-conflict');
  }
}

/** What the journal says of an object: the last write of it in the run being finished. */
export interface Written {
  readonly op: JournalOp;
  readonly state: 'done' | 'failed' | 'in-doubt';
  readonly targetName: string;
}

/** What the planner decided for a desired object (`rename`: `current` is the object of its own name). */
export interface Decision<A, W> {
  readonly kind: 'done' | 'in-doubt' | 'create' | 'rename' | ExistingDecision['kind'];
  readonly targetName: string;
  readonly current: A | undefined;
  readonly written: W | undefined;
}

/** What a kind tells the planner (the module comment says where each is asked). */
export interface KindRules<D, A extends { readonly name: string }, W extends Written, S> {
  nameOf(desired: D): string;
  /** The type `--type` selects by; none: by name only. */
  typeOf?(object: D | A | W): string;
  /** The journaled ops done once the target holds their object; default: creates. */
  readonly resumes?: readonly JournalOp[];
  duplicate?(desired: D): S;
  gate?(desired: D): S | undefined;
  step(desired: D, decision: Decision<A, W>): S;
  /** The delete of a target object the desired state does not hold (`prune`); undefined: none. */
  remove(actual: A, written: W | undefined): S | undefined;
  /** A journaled delete whose object the target no longer holds. */
  removed(name: string, written: W): S;
}

export interface KindPlanInput<D, A, W> {
  readonly desired: readonly D[];
  readonly actual: readonly A[];
  /** The run being finished: its last write of each object, by name (none for a new run). */
  readonly journal: ReadonlyMap<string, W>;
  readonly onConflict: OnConflict;
  /** What earlier runs created under another name (`--on-conflict rename`), by the desired name. */
  readonly renamed?: ReadonlyMap<string, string>;
  /** `--only` (and `--type`); undefined = all. */
  readonly only?: { has(name: string, type?: string): boolean } | undefined;
  readonly prune: boolean;
}

/** The steps of one kind (see the module comment). */
export function planKind<D, A extends { readonly name: string }, W extends Written, S>(
  rules: KindRules<D, A, W, S>,
  input: KindPlanInput<D, A, W>,
): S[] {
  const { journal, only } = input;
  const selects = (name: string, object: D | A | W) => only?.has(name, rules.typeOf?.(object)) ?? true;
  const actual = new Map(input.actual.map((a) => [a.name, a]));
  const taken = new Set(actual.keys());
  for (const d of input.desired) taken.add(rules.nameOf(d));
  const resumes = rules.resumes ?? ['create'];
  const selected = input.desired
    .filter((d) => selects(rules.nameOf(d), d))
    .sort((a, b) => compareNames(rules.nameOf(a), rules.nameOf(b)));

  const steps: S[] = [];
  const seen = new Set<string>();
  for (const d of selected) {
    const name = rules.nameOf(d);
    if (seen.has(name) && rules.duplicate !== undefined) {
      steps.push(rules.duplicate(d));
      continue;
    }
    seen.add(name);
    const written = journal.get(name);
    if (written?.state === 'done' && resumes.includes(written.op) && actual.has(written.targetName)) {
      const current = actual.get(written.targetName);
      steps.push(rules.step(d, { kind: 'done', targetName: written.targetName, current, written }));
      continue;
    }
    const gated = rules.gate?.(d);
    if (gated !== undefined) {
      steps.push(gated);
      continue;
    }
    if (written?.state === 'in-doubt' && written.op === 'create') {
      const current = actual.get(written.targetName);
      steps.push(rules.step(d, { kind: 'in-doubt', targetName: written.targetName, current, written }));
      continue;
    }
    // Renamed by an earlier run and still there under that name: it exists (a re-run renames nothing twice).
    const renamedTo = input.onConflict === 'rename' ? input.renamed?.get(name) : undefined;
    const copy = renamedTo === undefined ? undefined : actual.get(renamedTo);
    if (renamedTo !== undefined && copy !== undefined) {
      steps.push(rules.step(d, { kind: 'exists', targetName: renamedTo, current: copy, written }));
      continue;
    }
    const current = actual.get(name);
    const decision = current === undefined ? undefined : decideExisting(name, input.onConflict, taken);
    const targetName = decision?.kind === 'rename' ? decision.targetName : name;
    steps.push(rules.step(d, { kind: decision?.kind ?? 'create', targetName, current, written }));
  }

  if (input.prune) {
    const extra = [...actual.values()]
      .filter((a) => !seen.has(a.name) && selects(a.name, a))
      .sort((a, b) => compareNames(a.name, b.name));
    for (const a of extra) {
      const step = rules.remove(a, journal.get(a.name));
      if (step !== undefined) steps.push(step);
    }
    const deletes = [...journal]
      .filter(
        ([name, w]) => w.op === 'delete' && w.state !== 'failed' && !actual.has(name) && selects(name, w),
      )
      .sort(([a], [b]) => compareNames(a, b));
    for (const [name, w] of deletes) steps.push(rules.removed(name, w));
  }
  return steps;
}
