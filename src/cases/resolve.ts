/**
 * The `cases resolve` workflow: one PATCH case-status per case, with the audit reason, to the id found
 * by `look-up.ts`; one at a time, so outcomes come in the order given (a list typed by hand is short).
 */
import { updateCaseStatus } from '../api/cases.js';
import { type EnvironmentPorts, withClient } from '../api/client-factory.js';
import { ApiError, DdsError, InterruptedError, UsageError } from '../errors.js';
import { assertWriteConfirmed, confirmRequired } from '../protected.js';
import { type CaseTarget, lookUpCases } from './look-up.js';

export type ResolveOutcome =
  | { readonly kind: 'resolved'; readonly caseId: string; readonly target: CaseTarget }
  | {
      readonly kind: 'failed';
      readonly caseId: string;
      readonly target: CaseTarget;
      readonly status: number | undefined;
      readonly message: string;
    };

/** What {@link resolveCasesIn} did; `stopped` is the error that ended it early (auth, network, Ctrl-C). */
export interface ResolveRun {
  readonly outcomes: readonly ResolveOutcome[];
  readonly notAttempted: readonly string[];
  readonly stopped: DdsError | undefined;
}

/** `--reason`, trimmed; empty or missing is a usage error (exit 2). */
export function checkAuditReason(reason: unknown): string {
  const text = typeof reason === 'string' ? reason.trim() : '';
  if (text === '') {
    throw new UsageError('Expected --reason to be a non-empty text, got an empty one', {
      hint: 'Say why the cases are resolved, e.g. --reason "false positive: test data"',
    });
  }
  return text;
}

/** Resolve the cases `ids`: one failing case fails alone; auth, network and Ctrl-C stop the run. */
export async function resolveCasesIn(
  options: {
    readonly ids: readonly string[];
    readonly reason: string;
    /** `--confirm`: the name of a protected environment. */
    readonly confirm: string | undefined;
    readonly dryRun?: boolean;
  },
  ports: EnvironmentPorts,
  onEvent: (event: { readonly kind: 'case-settled'; readonly outcome: ResolveOutcome }) => void,
): Promise<{
  readonly environment: string;
  readonly targets: readonly CaseTarget[];
  readonly run?: ResolveRun;
  /** A dry run into a protected environment: the real run needs `--confirm` with this name. */
  readonly confirmRequired?: string | undefined;
}> {
  return withClient(ports, async (client, environment) => {
    if (options.dryRun !== true) assertWriteConfirmed(environment, options.confirm);
    const targets = await lookUpCases(client, options.ids, ports.signal);
    if (options.dryRun === true) {
      const required = confirmRequired(environment, options.confirm);
      return { environment: environment.label, targets, confirmRequired: required };
    }
    const outcomes: ResolveOutcome[] = [];
    const settled = (i: number, stopped: DdsError | undefined) => ({
      environment: environment.label,
      targets,
      run: { outcomes, notAttempted: targets.slice(i).map((t) => t.writeId), stopped },
    });
    for (const [i, target] of targets.entries()) {
      const caseId = target.writeId;
      if (ports.signal?.aborted) {
        return settled(
          i,
          new InterruptedError('Interrupted', { hint: 'Re-run with the cases not attempted' }),
        );
      }
      let outcome: ResolveOutcome;
      try {
        await updateCaseStatus(client, caseId, { caseStatus: 'resolved', auditReason: options.reason });
        outcome = { kind: 'resolved', caseId, target };
      } catch (error) {
        if (!(error instanceof DdsError)) throw error;
        if (!(error instanceof ApiError)) return settled(i, error);
        outcome = { kind: 'failed', caseId, target, status: error.status, message: error.message };
      }
      outcomes.push(outcome);
      onEvent({ kind: 'case-settled', outcome });
    }
    return settled(targets.length, undefined);
  });
}
