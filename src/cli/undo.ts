// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:NAME}" is a literal overrides placeholder, not a template
/** `dds-migrate undo JOURNAL`: options in, {@link undoRun} (src/sync/undo.ts), its result rendered. */
import { countOf, displayName } from '../display-name.js';
import { ExitCode, UsageError, withResumeHint } from '../errors.js';
import { scrub } from '../secrets.js';
import { KINDS, kindOf } from '../sync/kind.js';
import { type UndoEvent, type UndoLine, undoRun } from '../sync/undo.js';
import { isWritingStep, type UndoStep } from '../sync/undo-plan.js';
import type { CommandSpec } from './command.js';
import { resolveSide, runPorts, withEnvironmentOptions } from './environment.js';
import { writeJsonDocument } from './json-document.js';
import { booleanOption, readPathOption, readStringOption, stringOption } from './options.js';
import { printProblems, reportRefusal } from './render.js';

function describeUndoStep(step: UndoStep): string {
  const name = displayName(step.name);
  const typed = `${name}${step.type ? ` (${step.type})` : ''}`;
  // The first kind's lines are not prefixed (as `describeObjects` always names it).
  const prefix = step.object === KINDS[0]?.object ? '' : `${kindOf(step.object).label} `;
  switch (step.kind) {
    case 'delete-created':
      return `${prefix}delete     ${typed}: created by the import`;
    case 'put-back':
      return `${prefix}put back   ${typed}: ${step.fields.length > 0 ? step.fields.join(', ') : 'secrets the import changed'}`;
    case 're-create':
      return `${prefix}re-create  ${typed}: deleted by the import`;
    case 'left':
      return `${prefix}left       ${name}: ${step.reason}`;
    case 'reverted':
      return `${prefix}reverted   ${name}: already as before the import`;
    case 'invalid':
      return `${prefix}invalid    ${name}: ${step.problems.map((p) => `${p.path ?? ''} ${p.message}`.trim()).join('; ')}`;
  }
}

function lineJson(line: UndoLine) {
  return {
    kind: line.step.kind,
    object: line.step.object,
    name: line.step.name,
    type: line.step.type,
    ...(line.outcome === undefined ? {} : { outcome: line.outcome }),
    ...(line.message === undefined ? {} : { message: scrub(line.message) }),
    ...(line.step.kind === 'left' ? { reason: line.step.reason } : {}),
  };
}

export const undoCommand: CommandSpec = {
  builder: (yargs) =>
    withEnvironmentOptions(yargs, ['to'], { optional: true })
      .positional('journal', { type: 'string', describe: 'The journal the import wrote' })
      .options({
        overrides: stringOption(
          'Secrets to restore with (same format as import --overrides; "${env:NAME}" reads a variable)',
        ),
        'dry-run': booleanOption('Print what would be reverted; send nothing but reads'),
        confirm: stringOption('Name of a protected target environment, to allow writing to it'),
        'include-in-doubt': booleanOption(
          "Also delete objects whose create was in doubt (answer lost, found by name): they may be someone else's",
        ),
        schemas: stringOption('Folder of <type>.schema.json files for the pre-flight (default: shipped)'),
      }),
  examples: [
    {
      command: '$0 undo dr.journal.jsonl --to dr --dry-run',
      describe: 'Show what undo of that import would do',
    },
    {
      command: '$0 undo dr.journal.jsonl --to dr --overrides dr-overrides.json --dry-run',
      describe: 'The same, with the secrets that re-created connections would need',
    },
  ],
  async run(args, ctx) {
    const journal = readPathOption(args, 'journal', ctx.io.cwd);
    if (journal === undefined) throw new UsageError('Missing JOURNAL', { hint: 'See --help' });
    const onEvent = (event: UndoEvent): void => {
      if (event.kind === 'refused') reportRefusal(ctx, event.problems);
      if (event.kind === 'run-started') {
        ctx.out.info(
          `Undoing ${whichRun(event)}: ${countOf(event.writes, 'change')} in ${event.target} (concurrency ${event.concurrency}); journal ${event.journal}`,
        );
        if (event.resuming && event.includeInDoubt !== (args.includeInDoubt === true))
          ctx.out.warn(
            event.includeInDoubt
              ? 'Finishing the interrupted undo as it was started, with --include-in-doubt'
              : 'Finishing the interrupted undo as it was started, without --include-in-doubt; run undo --include-in-doubt after it to take back the creates it leaves in doubt',
          );
      }
    };
    const result = await undoRun(
      {
        journal,
        overrides: readPathOption(args, 'overrides', ctx.io.cwd),
        dryRun: args.dryRun === true,
        confirm: readStringOption(args, 'confirm'),
        schemas: readPathOption(args, 'schemas', ctx.io.cwd),
        includeInDoubt: args.includeInDoubt === true,
      },
      {
        resolveTarget: (boundUrl) =>
          resolveSide(ctx, { ...args, to: readStringOption(args, 'to') ?? boundUrl }, 'to'),
        ...runPorts(ctx),
      },
      onEvent,
    ).catch((error: unknown) => {
      throw withResumeHint(error, 'an undo');
    });
    if (result.kind === 'nothing') {
      if (ctx.globals.json) ctx.out.json({ ok: true, journal: result.journal, undone: null, steps: [] });
      else ctx.out.result(`Nothing to undo: every run of ${result.journal} is undone already`);
      return ExitCode.ok;
    }
    if (result.kind === 'dry-run') {
      if (ctx.globals.json) {
        writeJsonDocument(
          ctx.out,
          {
            dryRun: true,
            target: result.target,
            undoes: result.undoes,
            ...(result.onlyInDoubt ? { onlyInDoubt: true } : {}),
            steps: [],
            problems: result.problems,
          },
          'steps',
          mapLazily(result.steps, (step) => lineJson({ step, outcome: undefined })),
        );
      } else {
        ctx.out.result(`Plan for undoing ${whichRun(result)} in ${result.target} (dry run, nothing sent):`);
        for (const step of result.steps) ctx.out.result(`  ${describeUndoStep(step)}`);
        const writes = result.steps.filter(isWritingStep).length;
        ctx.out.result(`Total: ${writes === 0 ? 'nothing to do' : countOf(writes, 'change')}`);
      }
      if (result.problems.length > 0) {
        printProblems(ctx, result.problems, (count) => `Pre-flight would refuse this undo (${count}):`);
        return ExitCode.validation;
      }
      return ExitCode.ok;
    }
    const count = (outcome: string) => result.lines.filter((l) => l.outcome === outcome).length;
    const left = result.lines.filter((l) => l.step.kind === 'left');
    const failed = result.lines.filter((l) => l.outcome === 'failed');
    if (ctx.globals.json) {
      writeJsonDocument(
        ctx.out,
        {
          ok: result.stoppedBy === undefined && failed.length === 0 && left.length === 0,
          target: result.target,
          journal: result.journal,
          run: result.run,
          undone: result.undoes,
          ...(result.onlyInDoubt ? { onlyInDoubt: true } : {}),
          steps: [],
          ...(result.stoppedBy ? { stoppedBy: result.stoppedBy.code } : {}),
        },
        'steps',
        mapLazily(result.lines, lineJson),
      );
    } else {
      const lines = [
        `Undo of ${whichRun(result)} in ${result.target}: ${describeObjects(result.lines)}`,
        `  deleted    ${String(count('deleted')).padStart(6)}  (created by the import)`,
        `  restored   ${String(count('restored')).padStart(6)}  (put back to their state before the import)`,
        `  recreated  ${String(count('recreated')).padStart(6)}  (deleted by the import)`,
        `  reverted   ${String(result.lines.filter((l) => l.step.kind === 'reverted').length).padStart(6)}  (already as before)`,
        `  left       ${String(left.length).padStart(6)}  (not touched: reasons below)`,
        `  failed     ${String(failed.length).padStart(6)}`,
      ];
      if (count('pending') > 0)
        lines.push(`  pending    ${String(count('pending')).padStart(6)}  (re-run to resume)`);
      for (const l of left)
        lines.push(`  left ${displayName(l.step.name)}: ${l.step.kind === 'left' ? l.step.reason : ''}`);
      for (const l of failed) lines.push(`  failed ${displayName(l.step.name)}: ${l.message ?? ''}`);
      ctx.out.result(scrub(lines.join('\n')));
    }
    if (result.stoppedBy) throw result.stoppedBy;
    return failed.length > 0 || left.length > 0 ? ExitCode.partial : ExitCode.ok;
  },
};

/** `run 3`, or `run 3 (the creates its undo left in doubt)` when only those are taken back. */
function whichRun(undo: { readonly undoes: number; readonly onlyInDoubt: boolean }): string {
  return `run ${undo.undoes}${undo.onlyInDoubt ? ' (the creates its undo left in doubt)' : ''}`;
}

/** `12 connections, 3 scan profiles`: what the lines are about (the first kind always named). */
function describeObjects(lines: readonly UndoLine[]): string {
  const count = (object: string) => lines.filter((l) => l.step.object === object).length;
  return KINDS.map((k) => ({ label: k.label, n: count(k.object) }))
    .filter((c, i) => i === 0 || c.n > 0)
    .map((c) => countOf(c.n, c.label))
    .join(', ');
}

function* mapLazily<T, U>(items: Iterable<T>, map: (item: T) => U): Generator<U> {
  for (const item of items) yield map(item);
}
