import { createInterface } from 'node:readline';
import { checkWhereFilters, parseSet, parseWhere } from '../cases/filter.js';
import { type CaseUpdateResult, updateCases } from '../cases/update.js';
import { ExitCode, InterruptedError, PreflightError } from '../errors.js';
import type { BulkCaseUpdate, SecurityCase } from '../model/security-case.js';
import type { CommandSpec } from './command.js';
import type { CliContext } from './context.js';
import { envPorts, withEnvironmentOptions } from './environment.js';
import { booleanOption, listOption, readPathOption, readStringOption, stringOption } from './options.js';
import { protectedNote, renderTable } from './render.js';

const SAMPLE_SIZE = 5;

const SAMPLE_COLUMNS = [
  'caseId',
  'caseStatus',
  'severityLevel',
  'policyName',
  'dataSourceName',
  'assignee',
] as const;

function renderPreview(update: BulkCaseUpdate, matched: readonly SecurityCase[]): string {
  const filters = update.filters
    .map((f) => `${f.filterField} in (${f.filterValues.join(', ')})`)
    .join(' and ');
  const head = `${matched.length} case(s) match ${filters}; would set ${update.field} = ${JSON.stringify(update.newValue)}`;
  if (matched.length === 0) return head;
  const sample = matched.slice(0, SAMPLE_SIZE);
  const more = matched.length > sample.length ? `\n... and ${matched.length - sample.length} more` : '';
  return `${head}\n${renderTable(sample, SAMPLE_COLUMNS)}${more}`;
}

/** Go on only with --yes or a "y" at the prompt (on a terminal); otherwise throw, nothing sent. */
async function confirmUpdate(ctx: CliContext, yes: boolean, count: number): Promise<void> {
  if (yes) return;
  const stdin = ctx.io.stdin;
  if (stdin?.isTTY !== true || !ctx.out.stderrIsTTY) {
    throw new PreflightError(
      `refusing to update ${count} case(s) without --yes (not on a terminal); nothing was sent`,
      [],
      {
        hint: 'Check the count with --dry-run, then re-run with --yes',
      },
    );
  }
  ctx.io.stderr.write(`Update ${count} case(s)? [y/N] `);
  const rl = createInterface({ input: stdin, terminal: false });
  const answer = await new Promise<string>((resolve) => {
    rl.once('line', resolve);
    rl.once('close', () => resolve(''));
    ctx.signal.addEventListener('abort', () => resolve(''), { once: true });
  }).finally(() => rl.close());
  if (ctx.signal.aborted)
    throw new InterruptedError('Interrupted at the confirmation prompt; nothing was sent');
  if (!/^\s*y(es)?\s*$/i.test(answer)) {
    throw new PreflightError(`update of ${count} case(s) not confirmed; nothing was sent`);
  }
}

/** The ids the service reported, with a warning when they differ from the preview. */
function renderUpdated(
  ctx: CliContext,
  update: BulkCaseUpdate,
  matched: readonly SecurityCase[],
  result: CaseUpdateResult,
): void {
  const listed = (label: string, ids: readonly string[]) =>
    ids.length === 0 ? '' : `; ${label}: ${ids.slice(0, 10).join(', ')}${ids.length > 10 ? ', ...' : ''}`;
  const { caseIds, readBack, missing, unexpected } = result;
  const updated = caseIds.length + readBack.length;
  if (caseIds.length !== matched.length || missing.length > 0 || unexpected.length > 0) {
    const readBackText = listed(
      `not reported, read back with ${update.field} = ${update.newValue}`,
      readBack,
    );
    ctx.out.warn(
      `the service reported ${caseIds.length} updated case(s), the preview matched ${matched.length}${readBackText}${listed('not reported', missing)}${listed('not in the preview', unexpected)}`,
    );
  }
  if (ctx.globals.json) {
    ctx.out.json({ ...update, matched: matched.length, updated, caseIds, readBack, missing, unexpected });
  } else {
    for (const id of [...caseIds, ...readBack]) ctx.out.result(id);
    ctx.out.info(`${updated} case(s) updated: ${update.field} = ${JSON.stringify(update.newValue)}`);
  }
}

export const casesUpdateCommand: CommandSpec = {
  builder: (yargs) =>
    withEnvironmentOptions(yargs, ['env'])
      .options({
        where: listOption(
          'FIELD=V1,V2: cases whose FIELD is one of the values (repeat for more fields; all must match)',
        ),
        set: stringOption(
          'FIELD=VALUE: caseStatus (open, acknowledged, silenced, resolved, remediated) or assignee',
        ),
        'dry-run': booleanOption('Only show how many cases match, and the first few'),
        yes: booleanOption('Do not ask for confirmation (required when not on a terminal)', { alias: 'y' }),
        reason: stringOption(
          'Why (kept on every line of the --audit trail; the bulk request itself has no field for it)',
        ),
        audit: stringOption(
          "Append each matched case's before-state and the result to this JSON Lines file (0600)",
        ),
        confirm: stringOption('Name of a protected environment, to allow writing to it'),
      })
      .demandOption(['set']),
  examples: [
    {
      command:
        "$0 cases update --env prod --where 'policyName=SSN in Unstructured Data' --where caseStatus=open --set caseStatus=resolved --dry-run",
      describe: 'How many open cases of a policy would be resolved',
    },
    {
      command:
        "$0 cases update --env prod --where 'policyName=SSN in Unstructured Data' --where caseStatus=open --set caseStatus=resolved --yes --reason 'policy retired' --audit audit.jsonl",
      describe: 'Resolve them, keeping an audit trail',
    },
    {
      command:
        '$0 cases update --env prod --where dataSourceName=hr-documents-s3 --set assignee=alice@example.com --yes',
      describe: 'Assign the cases of one data source',
    },
  ],
  async run(args, ctx) {
    // Each --where is one FIELD=VALUES pair (the values split later, with `\,` escapes).
    const where = [args.where ?? []].flat().map(String);
    const update: BulkCaseUpdate = {
      ...parseSet(readStringOption(args, 'set', 'FIELD=VALUE') ?? ''),
      filters: parseWhere(where),
    };
    for (const warning of checkWhereFilters(update.filters)) ctx.out.warn(warning);
    const outcome = await updateCases(
      {
        update,
        reason: readStringOption(args, 'reason', 'a non-empty reason'),
        dryRun: args.dryRun === true,
        auditFile: readPathOption(args, 'audit', ctx.io.cwd),
        confirm: readStringOption(args, 'confirm'),
      },
      {
        ...envPorts(ctx, args),
        confirmUpdate: (matched) => confirmUpdate(ctx, args.yes === true, matched.length),
      },
      (event) => ctx.out.info(renderPreview(update, event.matched)),
    );
    switch (outcome.kind) {
      case 'dry-run':
        if (ctx.globals.json) {
          ctx.out.json({
            dryRun: true,
            ...update,
            matched: outcome.matched.length,
            caseIds: outcome.matched.map((c) => c.caseId),
            confirmRequired: outcome.confirmRequired ?? null,
          });
        } else {
          ctx.out.result(renderPreview(update, outcome.matched));
        }
        if (outcome.confirmRequired !== undefined) ctx.out.warn(protectedNote(outcome.confirmRequired));
        return ExitCode.ok;
      case 'nothing-matched':
        ctx.out.info('No case matches: nothing was sent');
        if (ctx.globals.json)
          ctx.out.json({ field: update.field, newValue: update.newValue, matched: 0, caseIds: [] });
        return ExitCode.ok;
      case 'updated':
        renderUpdated(ctx, update, outcome.matched, outcome.result);
        return ExitCode.ok;
    }
  },
};
