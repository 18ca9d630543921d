/** `dds-migrate cases resolve CASE_ID,..`: one outcome line per case; exit 1 when any failed. */
import { type CaseTarget, describeTarget } from '../cases/look-up.js';
import { checkAuditReason, type ResolveOutcome, resolveCasesIn } from '../cases/resolve.js';
import { ExitCode, PartialFailureError } from '../errors.js';
import type { CommandSpec } from './command.js';
import { envPorts, withEnvironmentOptions } from './environment.js';
import { booleanOption, parseListOption, readStringOption, stringOption } from './options.js';
import { protectedNote } from './render.js';

/** ` (caseId SPC-12; found by caseId)` when the id written to is not simply the one given. */
function aside(target: CaseTarget): string {
  const plain =
    target.foundBy !== undefined &&
    target.given === target.writeId &&
    (target.caseId ?? target.writeId) === target.writeId;
  return plain ? '' : `  (${describeTarget(target)})`;
}

function describeOutcome(o: ResolveOutcome): string {
  return o.kind === 'resolved'
    ? `resolved  ${o.caseId}${aside(o.target)}`
    : `failed    ${o.caseId}${aside(o.target)}  ${o.message}`;
}

function jsonTarget(t: CaseTarget): Record<string, unknown> {
  return { given: t.given, writeId: t.writeId, caseId: t.caseId ?? null, foundBy: t.foundBy ?? null };
}

export const casesResolveCommand: CommandSpec = {
  builder: (yargs) =>
    withEnvironmentOptions(yargs, ['env'])
      .positional('ids', { type: 'string', array: true, describe: 'Case ids (comma- or space-separated)' })
      .options({
        reason: stringOption('Why the cases are resolved (required; kept by the service as auditReason)', {
          demandOption: true,
        }),
        confirm: stringOption('Name of a protected environment, to allow writing to it'),
        'dry-run': booleanOption('Look the ids up and print the id each PATCH would go to; send nothing'),
      }),
  examples: [
    {
      command:
        "$0 cases resolve 67c3b1e20000000000000001,67c3b1e20000000000000004 --env prod --reason 'false positive: synthetic test data'",
      describe: 'Resolve two cases',
    },
  ],
  async run(args, ctx) {
    // yargs holds <ids..> to at least one value; an empty one is refused here.
    const ids = parseListOption(args.ids, 'the case ids') ?? [];
    // A repeated --reason is named as such ("2 values"), not as an empty one.
    const reason = checkAuditReason(readStringOption(args, 'reason', 'a non-empty text'));
    const dryRun = args.dryRun === true;
    const { environment, targets, run, confirmRequired } = await resolveCasesIn(
      { ids, reason, confirm: readStringOption(args, 'confirm'), dryRun },
      envPorts(ctx, args),
      (event) => {
        if (!ctx.globals.json) ctx.out.result(describeOutcome(event.outcome));
      },
    );
    if (run === undefined) {
      if (ctx.globals.json)
        ctx.out.json({
          environment,
          dryRun: true,
          targets: targets.map(jsonTarget),
          confirmRequired: confirmRequired ?? null,
        });
      else
        for (const t of targets)
          ctx.out.result(`would resolve  ${t.writeId}  (${describeTarget(t)}; 1 PATCH)`);
      if (confirmRequired !== undefined) ctx.out.warn(protectedNote(confirmRequired));
      return ExitCode.ok;
    }
    const failed = run.outcomes.filter((o) => o.kind === 'failed');
    const resolved = run.outcomes.filter((o) => o.kind === 'resolved');
    if (ctx.globals.json) {
      ctx.out.json({
        environment,
        reason,
        resolved: resolved.map((o) => o.caseId),
        failed: failed.map((o) => ({ caseId: o.caseId, status: o.status, message: o.message })),
        notAttempted: run.notAttempted,
        targets: targets.map(jsonTarget),
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
