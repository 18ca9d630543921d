import { countOf } from '../display-name.js';
import { ExitCode, PartialFailureError } from '../errors.js';
import { assertPlanClean, type CloneResult, cloneProfiles } from '../profiles/clone.js';
import type { DataSourceMapping, ProfileClonePlan, ProfileCloneStep } from '../profiles/plan.js';
import type { CommandSpec } from './command.js';
import type { CliContext } from './context.js';
import { resolveSide, runPorts, withEnvironmentOptions } from './environment.js';
import { booleanOption, parseListOption, readPathOption, readStringOption, stringOption } from './options.js';
import { printProblems, protectedNote, renderTable, withRefusalReported } from './render.js';

function describeMapping(m: DataSourceMapping): string {
  if (m.via === 'name-passthrough') return `${m.name} (by name)`;
  return `${m.from} -> ${m.to} (${m.name}${m.via === 'id-map' ? ', id map' : ''})`;
}

function stepJson(step: ProfileCloneStep): Record<string, unknown> {
  const base = { sourceId: step.sourceId, name: step.name, action: step.kind };
  if (step.kind === 'exists') return { ...base, targetId: step.targetId };
  if (step.kind === 'create')
    return { ...base, singleRun: step.singleRun, dataSources: step.dataSources, body: step.body };
  return { ...base, singleRun: step.singleRun, problems: step.problems };
}

function printPlan(ctx: CliContext, plan: ProfileClonePlan, from: string, to: string): void {
  if (ctx.globals.json) {
    ctx.out.json({
      dryRun: true,
      from,
      to,
      profiles: plan.steps.map(stepJson),
      problems: plan.problems,
      missingConnections: plan.missingConnections,
    });
    return;
  }
  ctx.out.result(`plan: ${plan.steps.length} profile(s) from ${from} to ${to}`);
  for (const step of plan.steps) {
    if (step.kind === 'create') {
      ctx.out.result(
        `create   ${step.sourceId}  '${step.name}'${step.singleRun ? ' (one-time: starts a scan)' : ''}`,
      );
      for (const m of step.dataSources) ctx.out.result(`           ${describeMapping(m)}`);
    } else if (step.kind === 'exists') {
      ctx.out.result(`exists   ${step.sourceId}  '${step.name}' (already in the target: nothing sent)`);
    } else {
      // Its problems are listed on stderr (one list for every profile), not repeated here.
      ctx.out.result(
        `blocked  ${step.sourceId}  '${step.name}': ${countOf(step.problems.length, 'problem')} (listed on stderr)`,
      );
    }
  }
}

function resultRow(r: CloneResult): Record<string, unknown> {
  if (r.kind === 'failed')
    return { sourceId: r.sourceId, targetId: '', name: r.name, result: `failed: ${r.message}` };
  return { sourceId: r.sourceId, targetId: r.targetId ?? '', name: r.name, result: r.kind };
}

function resultJson(r: CloneResult): Record<string, unknown> {
  const base = { sourceId: r.sourceId, name: r.name, result: r.kind };
  if (r.kind === 'failed') return { ...base, status: r.status, message: r.message };
  return { ...base, targetId: r.targetId, ...(r.kind === 'created' ? { dataSources: r.dataSources } : {}) };
}

/** `N created, N existed, N failed, N not attempted`: what the run really did. */
function countResults(results: readonly CloneResult[], notAttempted: number): string {
  const n = (kind: CloneResult['kind']) => results.filter((r) => r.kind === kind).length;
  const parts = [`${n('created')} created`, `${n('exists')} already in the target`, `${n('failed')} failed`];
  if (notAttempted > 0) parts.push(`${notAttempted} not attempted`);
  return parts.join(', ');
}

export const profilesCloneCommand: CommandSpec = {
  builder: (yargs) =>
    withEnvironmentOptions(yargs, ['from', 'to'])
      .positional('ids', {
        type: 'string',
        array: true,
        describe: 'Source profile ids (comma- or space-separated)',
      })
      .options({
        'id-map': stringOption('The id map written by `import --id-map` (source _id -> target _id)'),
        'dry-run': booleanOption('Print the plan (every data source mapping) and send nothing'),
        'allow-run': booleanOption(
          'Allow one-time profiles (isSingleRunScan: true): each starts a scan at once',
        ),
        confirm: stringOption('Name of a protected target environment, to allow writing to it'),
      }),
  examples: [
    {
      command: '$0 profiles clone 66b2a0d1c3e4f5a6b7c8d902 --from prod --to dr --dry-run',
      describe: 'Show how the data sources would be mapped',
    },
    {
      command:
        '$0 profiles clone 66b2a0d1c3e4f5a6b7c8d901,66b2a0d1c3e4f5a6b7c8d904 --from prod --to dr --id-map prod.dr.idmap.json',
      describe: 'Clone two profiles after an import',
    },
  ],
  async run(args, ctx) {
    // yargs holds <ids..> to at least one value; an empty one is refused here.
    const ids = parseListOption(args.ids, 'the profile ids') ?? [];
    const result = await withRefusalReported(ctx, () =>
      cloneProfiles(
        {
          ids,
          idMap: readPathOption(args, 'id-map', ctx.io.cwd),
          dryRun: args.dryRun === true,
          allowRun: args.allowRun === true,
          confirm: readStringOption(args, 'confirm'),
        },
        {
          resolveSource: () => resolveSide(ctx, args, 'from'),
          resolveTarget: () => resolveSide(ctx, args, 'to'),
          ...runPorts(ctx),
        },
      ),
    );
    if (result.kind === 'dry-run') {
      printPlan(ctx, result.plan, result.from, result.to);
      if (result.confirmRequired !== undefined) ctx.out.warn(protectedNote(result.confirmRequired));
      // The plan (with its problems, under --json) is the dry run's one document.
      if (result.plan.problems.length > 0)
        printProblems(ctx, result.plan.problems, (count) => `Pre-flight found ${count}:`);
      assertPlanClean(result.plan);
      return ExitCode.ok;
    }
    const outcome = result.outcome;
    if (ctx.globals.json) {
      ctx.out.json({
        from: result.from,
        to: result.to,
        profiles: outcome.results.map(resultJson),
        notAttempted: outcome.notAttempted.map((s) => ({ sourceId: s.sourceId, name: s.name })),
      });
    } else if (outcome.results.length + outcome.notAttempted.length > 0) {
      const rows = outcome.results.map(resultRow);
      for (const step of outcome.notAttempted)
        rows.push({ sourceId: step.sourceId, targetId: '', name: step.name, result: 'not confirmed' });
      ctx.out.result(renderTable(rows, ['sourceId', 'targetId', 'name', 'result'], 120));
    }
    if (outcome.stopped !== undefined) throw outcome.stopped;
    const failed = outcome.results.filter((r) => r.kind === 'failed');
    if (failed.length > 0) {
      const first = failed[0];
      throw new PartialFailureError(
        `${failed.length} of ${outcome.results.length} profile(s) could not be created${first?.kind === 'failed' ? `; first: '${first.name}': ${first.message}` : ''}`,
        {
          hint: `${countResults(outcome.results, outcome.notAttempted.length)}; fix the cause and re-run clone (profiles already in the target are reported as existing)`,
        },
      );
    }
    return ExitCode.ok;
  },
};
