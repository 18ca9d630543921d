/**
 * `dds-migrate cases resolve CASE_ID,..`: one PATCH case-status per case with the audit reason; one
 * outcome line per case; exit 1 when any failed, with the service's message.
 */
import { checkAuditReason, type ResolveOutcome } from '../cases/resolve.js';
import { resolveCasesIn } from '../cases/resolve-cases-in.js';
import { ExitCode, PartialFailureError, UsageError } from '../errors.js';
import type { CommandSpec } from './command.js';
import { createEnvironmentClient, resolveSide, withEnvironmentOptions } from './environment.js';
import { parseListOption } from './options.js';

function describeOutcome(o: ResolveOutcome): string {
  return o.kind === 'resolved' ? `resolved  ${o.caseId}` : `failed    ${o.caseId}  ${o.message}`;
}

/** `cases resolve`. */
export const casesResolveCommand: CommandSpec = {
  command: 'resolve <ids..>',
  describe: 'Resolve cases one at a time, recording an audit reason',
  builder: (yargs) =>
    withEnvironmentOptions(yargs, ['env'])
      .positional('ids', { type: 'string', array: true, describe: 'Case ids (comma- or space-separated)' })
      .option('reason', {
        type: 'string',
        requiresArg: true,
        demandOption: true,
        describe: 'Why the cases are resolved (required; kept by the service as auditReason)',
      })
      .option('confirm', {
        type: 'string',
        requiresArg: true,
        describe: 'Name of a protected environment, to allow writing to it',
      }),
  examples: [
    {
      command:
        "$0 cases resolve 67c3b1e20000000000000001,67c3b1e20000000000000004 --env prod --reason 'false positive: synthetic test data'",
      describe: 'Resolve two cases',
    },
  ],
  async run(args, ctx) {
    const ids = parseListOption(args.ids, 'the case ids') ?? [];
    if (ids.length === 0)
      throw new UsageError('Expected at least one case id', {
        hint: 'Example: cases resolve ID1,ID2 --env prod --reason "..."',
      });
    const reason = checkAuditReason(args.reason);
    const { environment, run } = await resolveCasesIn(
      { ids, reason, confirm: typeof args.confirm === 'string' ? args.confirm : undefined },
      {
        resolveEnvironment: async () => (await resolveSide(ctx, args, 'env')).environment,
        createClient: (env, options) => createEnvironmentClient(ctx, env, options),
        signal: ctx.signal,
      },
      (event) => {
        if (!ctx.globals.json) ctx.out.result(describeOutcome(event.outcome));
      },
    );
    const failed = run.outcomes.filter((o) => o.kind === 'failed');
    const resolved = run.outcomes.filter((o) => o.kind === 'resolved');
    if (ctx.globals.json) {
      ctx.out.json({
        environment,
        reason,
        resolved: resolved.map((o) => o.caseId),
        failed: failed.map((o) => ({ caseId: o.caseId, status: o.status, message: o.message })),
        notAttempted: run.notAttempted,
      });
    } else {
      for (const id of run.notAttempted) ctx.out.result(`skipped   ${id}  (not attempted)`);
      ctx.out.info(
        `${resolved.length} resolved, ${failed.length} failed${run.notAttempted.length > 0 ? `, ${run.notAttempted.length} not attempted` : ''}`,
      );
    }
    if (run.stopped !== undefined) throw run.stopped;
    if (failed.length > 0) {
      const first = failed[0];
      throw new PartialFailureError(
        `${failed.length} of ${ids.length} case(s) could not be resolved${first?.kind === 'failed' ? `; first: ${first.caseId}: ${first.message}` : ''}`,
        { hint: 'Check the ids (see cases list) and re-run for the failed ones' },
      );
    }
    return ExitCode.ok;
  },
};
