import type { DdsError } from '../errors.js';
import type { ExecuteDeps } from '../sync/execute.js';
import type { JournalObject } from '../sync/journal/records.js';
import { eachPlan, type KindPlans, writersFor } from '../sync/kind.js';
import type { ImportHandOn, KindImportRun } from './kind-import.js';

/** What {@link runImportSteps} needs: what each kind's run is handed (the executor's writers added here). */
export interface RunImportInput extends Omit<KindImportRun, 'deps' | 'onStarted'> {
  /** Every kind's plan. */
  readonly plans: KindPlans;
  readonly deps: Omit<ExecuteDeps, 'writers'>;
  /** Called before a later kind's writes start (after the kinds before it), with its label. */
  readonly onKindStarted: (label: string, sends: number) => void;
}

/** What the run did: each kind's outcomes (connections' by name, profiles' by plan index), why it stopped. */
export interface RunImportResult {
  readonly outcomes: Partial<Record<JournalObject, ReadonlyMap<unknown, unknown>>>;
  readonly stoppedBy: DdsError | undefined;
  /** The plans as run: a connection create that met someone else's replaced by its second plan. */
  readonly plans: KindPlans;
}

/**
 * Run every kind's writes through the executor, kind after kind in the order of `KINDS` (connection
 * creates, updates, deletes; then scan profiles one at a time), each given what the kinds before it
 * hand on; the first kind that stops (Ctrl-C, retry budget, 401) ends the run.
 */
export async function runImportSteps(input: RunImportInput): Promise<RunImportResult> {
  const run = { ...input, deps: { ...input.deps, writers: writersFor(input.client) } };
  const outcomes: Partial<Record<JournalObject, ReadonlyMap<unknown, unknown>>> = {};
  const handed = new Map<JournalObject, ImportHandOn>();
  let plans = input.plans;
  for (const [kind, plan] of eachPlan(input.plans)) {
    const onStarted = (sends: number) => input.onKindStarted(kind.label, sends);
    const result = await kind.runImport(plan, { ...run, onStarted }, handed);
    outcomes[kind.object] = result.outcomes;
    plans = { ...plans, [kind.planKey]: result.plan };
    if (result.handOn !== undefined) handed.set(kind.object, result.handOn);
    if (result.stoppedBy !== undefined) return { outcomes, stoppedBy: result.stoppedBy, plans };
  }
  return { outcomes, stoppedBy: undefined, plans };
}
