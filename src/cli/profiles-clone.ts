/**
 * `dds-migrate profiles clone ID,.. --from E --to E [--id-map FILE] [--dry-run] [--allow-run]`: plan every
 * profile (data sources remapped by name or through an import's id map), refuse the whole run if any
 * profile has a problem, then create them in the target. Prints source id -> target id.
 */
import { resolve } from 'node:path';
import { ExitCode, PartialFailureError, UsageError } from '../errors.js';
import { assertPlanClean, type CloneResult, cloneProfiles } from '../profiles/clone.js';
import type { DataSourceMapping, ProfileClonePlan, ProfileCloneStep } from '../profiles/plan.js';
import type { CommandSpec } from './command.js';
import type { CliContext } from './context.js';
import { createEnvironmentClient, resolveSide, withEnvironmentOptions } from './environment.js';
import { parseListOption } from './options.js';
import { renderTable, withRefusalJson } from './render.js';

function describeMapping(m: DataSourceMapping): string {
  if (m.via === 'name-passthrough') return `${m.name} (by name)`;
  return `${m.from} -> ${m.to} (${m.name}${m.via === 'id-map' ? ', id map' : ''})`;
}

function stepJson(step: ProfileCloneStep): Record<string, unknown> {
  if (step.kind === 'exists') {
    return { sourceId: step.sourceId, name: step.name, action: 'exists', targetId: step.targetId };
  }
  return step.kind === 'create'
    ? {
        sourceId: step.sourceId,
        name: step.name,
        action: 'create',
        singleRun: step.singleRun,
        dataSources: step.dataSources,
        body: step.body,
      }
    : {
        sourceId: step.sourceId,
        name: step.name,
        action: 'blocked',
        singleRun: step.singleRun,
        problems: step.problems,
      };
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
      // Its problems are in the one list of the error line on stderr, not repeated here.
      const n = step.problems.length;
      ctx.out.result(
        `blocked  ${step.sourceId}  '${step.name}': ${n} problem${n === 1 ? '' : 's'} (listed on stderr)`,
      );
    }
  }
}

function resultRow(r: CloneResult): Record<string, unknown> {
  switch (r.kind) {
    case 'created':
      return { sourceId: r.sourceId, targetId: r.targetId ?? '', name: r.name, result: 'created' };
    case 'exists':
      return { sourceId: r.sourceId, targetId: r.targetId ?? '', name: r.name, result: 'exists' };
    case 'failed':
      return { sourceId: r.sourceId, targetId: '', name: r.name, result: `failed: ${r.message}` };
    default: {
      const unknown: never = r;
      throw new Error(`unknown clone result ${JSON.stringify(unknown)}`);
    }
  }
}

/** `N created, N existed, N failed, N not attempted`: what the run really did. */
function countResults(results: readonly CloneResult[], notAttempted: number): string {
  const n = (kind: CloneResult['kind']) => results.filter((r) => r.kind === kind).length;
  const parts = [`${n('created')} created`, `${n('exists')} already in the target`, `${n('failed')} failed`];
  if (notAttempted > 0) parts.push(`${notAttempted} not attempted`);
  return parts.join(', ');
}

/** `profiles clone`. */
export const profilesCloneCommand: CommandSpec = {
  command: 'clone <ids..>',
  describe: 'Copy scan profiles to another environment, remapping their data sources by connection name',
  builder: (yargs) =>
    withEnvironmentOptions(yargs, ['from', 'to'])
      .positional('ids', {
        type: 'string',
        array: true,
        describe: 'Source profile ids (comma- or space-separated)',
      })
      .option('id-map', {
        type: 'string',
        requiresArg: true,
        describe: 'The id map written by `import --id-map` (source _id -> target _id)',
      })
      .option('dry-run', {
        type: 'boolean',
        describe: 'Print the plan (every data source mapping) and send nothing',
      })
      .option('allow-run', {
        type: 'boolean',
        describe: 'Allow one-time profiles (isSingleRunScan: true): each starts a scan at once',
      })
      .option('confirm', {
        type: 'string',
        requiresArg: true,
        describe: 'Name of a protected target environment, to allow writing to it',
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
    const ids = parseListOption(args.ids, 'the profile ids') ?? [];
    if (ids.length === 0)
      throw new UsageError('Expected at least one scan profile id', {
        hint: 'Example: profiles clone ID1,ID2 --from prod --to dr',
      });
    const result = await withRefusalJson(
      ctx,
      cloneProfiles(
        {
          ids,
          idMap: typeof args.idMap === 'string' ? resolve(ctx.io.cwd, args.idMap) : undefined,
          dryRun: args.dryRun === true,
          allowRun: args.allowRun === true,
          confirm: typeof args.confirm === 'string' ? args.confirm : undefined,
        },
        {
          resolveSource: async () => (await resolveSide(ctx, args, 'from')).environment,
          resolveTarget: async () => (await resolveSide(ctx, args, 'to')).environment,
          createClient: (environment, options) => createEnvironmentClient(ctx, environment, options),
          log: ctx.log,
          signal: ctx.signal,
        },
      ),
    );
    if (result.kind === 'dry-run') {
      printPlan(ctx, result.plan, result.from, result.to);
      assertPlanClean(result.plan);
      return ExitCode.ok;
    }
    const outcome = result.outcome;
    const rows = outcome.results.map(resultRow);
    for (const step of outcome.notAttempted)
      rows.push({ sourceId: step.sourceId, targetId: '', name: step.name, result: 'not confirmed' });
    if (ctx.globals.json) {
      ctx.out.json({
        from: result.from,
        to: result.to,
        profiles: outcome.results.map((r) =>
          r.kind === 'created'
            ? {
                sourceId: r.sourceId,
                name: r.name,
                result: 'created',
                targetId: r.targetId,
                dataSources: r.dataSources,
              }
            : r.kind === 'exists'
              ? { sourceId: r.sourceId, name: r.name, result: 'exists', targetId: r.targetId }
              : {
                  sourceId: r.sourceId,
                  name: r.name,
                  result: 'failed',
                  status: r.status,
                  message: r.message,
                },
        ),
        notAttempted: outcome.notAttempted.map((s) => ({ sourceId: s.sourceId, name: s.name })),
      });
    } else if (rows.length > 0) {
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
