/** The rendering of `import`: its events on stderr, its plan or summary on stdout (or as `--json`). */
import { countOf, displayName } from '../display-name.js';
import { assertNever, ExitCode } from '../errors.js';
import type { ImportEvent, ImportResult } from '../importer/import-types.js';
import { renderPlanMarkdown } from '../importer/plan-markdown.js';
import { formatWarning } from '../importer/preflight.js';
import { scrub } from '../secrets.js';
import { eachPlan, KINDS } from '../sync/kind.js';
import type { CliContext } from './context.js';
import { type CountingBar, startCountingBar } from './progress-bar.js';
import { printProblems, protectedNote } from './render.js';
import { printWarnings } from './warnings.js';

/** An event renderer for one run: warnings and progress on stderr. */
export function createEventRenderer(ctx: CliContext): (event: ImportEvent) => void {
  let progress: CountingBar | undefined;
  return (event) => {
    switch (event.kind) {
      case 'override-removes':
        printWarnings(
          ctx,
          event.removals.map(({ entry, paths }) => ({
            group: `overrides remove ${paths.join(', ')}`,
            where: entry,
            text: `overrides remove ${paths.join(', ')} of ${displayName(entry)}`,
          })),
        );
        return;
      case 'unused-override':
        ctx.out.warn(`overrides ${event.rule} matches no entry of the snapshot`);
        return;
      case 'template-warnings':
        printWarnings(
          ctx,
          event.warnings.map((w) => ({
            group: w.type && !w.path ? `${w.type}: ${w.message}` : w.message,
            where: [w.entry, w.path].filter((x) => x !== undefined && x !== '').join(' ') || (w.type ?? ''),
            text: formatWarning(w),
          })),
        );
        return;
      case 'reference-warnings':
        for (const w of event.messages) ctx.out.warn(w);
        return;
      case 'resuming':
        ctx.out.info(
          `resuming: ${event.done} of ${event.total} already done${
            event.inDoubt > 0
              ? `, ${event.inDoubt} in doubt (looked up by name before anything is sent again)`
              : ''
          }`,
        );
        return;
      case 'run-started':
        ctx.out.info(
          `Importing ${event.sends} of ${countOf(event.total, 'entry', 'entries')} into ${event.target} (concurrency ${event.concurrency}${
            event.rate === undefined ? '' : `, rate ${event.rate} req/s`
          }); journal ${event.journal}`,
        );
        progress = startCountingBar(
          ctx,
          event.sends,
          'import |{bar}| {value}/{total} | {speed} req/s | ETA {eta_formatted} | failed {failed}',
          50,
        );
        return;
      case 'write-settled':
        progress?.tick(event.outcome.kind === 'failed');
        return;
      case 'run-ended':
        // Also when the run throws: the bar must not be left drawing over the error line.
        progress?.stop();
        return;
      case 'kind-started':
        ctx.out.info(
          `${event.label[0]?.toUpperCase()}${event.label.slice(1)}s: ${event.sends} to send to ${event.target}`,
        );
        return;
      case 'file-written':
        ctx.out.info(`${event.file === 'report' ? 'Report' : 'Id map'}: ${event.path}`);
        return;
      default:
        assertNever(event, 'import event');
    }
  };
}

/** The forms of a dry run's plan (`--format`). */
export const PLAN_FORMATS = ['text', 'markdown', 'json'] as const;

/** Print a dry run's plan and verdict. */
export function renderDryRun(
  ctx: CliContext,
  result: Extract<ImportResult, { kind: 'dry-run' }>,
  format: (typeof PLAN_FORMATS)[number],
): ExitCode {
  const { problems } = result;
  const plans = eachPlan(result);
  if (format === 'markdown') {
    ctx.out.result(scrub(renderPlanMarkdown(result)).trimEnd());
  } else if (format === 'json') {
    ctx.out.json({
      dryRun: true,
      target: result.target,
      ...Object.assign({}, ...plans.map(([kind, plan]) => kind.planJson(plan))),
      problems,
      confirmRequired: result.confirmRequired ?? null,
    });
  } else {
    ctx.out.result(
      `Plan for importing ${countOf(result.entryCount, 'entry', 'entries')} into ${result.target} (dry run, nothing sent):`,
    );
    for (const [kind, plan] of plans) for (const line of kind.planText(plan)) ctx.out.result(`  ${line}`);
    const counts = plans
      .flatMap(([kind, plan]) => Object.entries(kind.planTotals?.(plan) ?? {}))
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    ctx.out.result(`Total: ${counts || 'nothing to do'}`);
    if (result.confirmRequired !== undefined) {
      ctx.out.result(protectedNote(result.confirmRequired, result.target));
    }
  }
  if (problems.length > 0) {
    printProblems(ctx, problems, (count) => `Pre-flight would refuse this import (${count}):`);
    return ExitCode.validation;
  }
  return ExitCode.ok;
}

/** Print a run's summary; throw why it stopped early, if it did. */
export function renderRun(
  ctx: CliContext,
  result: Extract<ImportResult, { kind: 'ran' }>,
  /** `--on-conflict update`: what the target held was compared. */
  existingCompared: boolean,
): ExitCode {
  const json = KINDS.map((kind) => kind.runJson(result));
  const parts = KINDS.flatMap((kind) => kind.failed(result) ?? []);
  if (ctx.globals.json) {
    ctx.out.json({
      ok: result.stoppedBy === undefined && parts.length === 0,
      target: result.target,
      ...Object.assign({}, ...json.map((j) => j.head)),
      rateLimited: result.rateLimited,
      journal: result.journal,
      run: result.run ?? null,
      // Nothing written under skip: what the target held was not compared (null: not known).
      upToDate: result.run !== undefined ? false : existingCompared ? true : null,
      report: result.reportPath ?? null,
      idMap: result.idMapPath ?? null,
      ...Object.assign({}, ...json.map((j) => j.tail)),
      ...(result.stoppedBy ? { stoppedBy: result.stoppedBy.code } : {}),
    });
  } else {
    for (const kind of KINDS) {
      const summary = kind.summary(result, result.target);
      if (summary !== undefined) ctx.out.result(summary);
    }
    if (result.run === undefined && existingCompared)
      ctx.out.result(`${result.target} is up to date with the snapshot: nothing was written`);
    else if (result.run === undefined)
      // The objects the target holds were left as they are, not compared: they may differ.
      ctx.out.result(
        `Nothing was written into ${result.target}: what it held was left as it is, not compared (diff shows what differs; --on-conflict update updates it)`,
      );
    else ctx.out.info(`Run ${result.run} of ${result.journal} (undo takes it back)`);
  }
  if (result.stoppedBy) throw result.stoppedBy;
  if (parts.length > 0) {
    ctx.out.warn(`${parts.join(' and ')} failed (see above); fix them and re-run to retry`);
    return ExitCode.partial;
  }
  return ExitCode.ok;
}
