/** `dds-migrate validate SNAPSHOT`: every entry against its template schema; exit 3 when any is invalid. */
import { formatReferenceNeeds } from '../connections/references.js';
import { countOf } from '../display-name.js';
import { ExitCode } from '../errors.js';
import type { ValidationProblem } from '../schema/catalog.js';
import { type ValidateResult, validateSnapshotFile } from '../validate/validate-snapshot-file.js';
import type { CommandSpec } from './command.js';
import type { CliContext } from './context.js';
import { CONNECTION_OPTIONS, resolveSide, runPorts } from './environment.js';
import { readPathOption, readStringOption, stringOption } from './options.js';
import { readSnapshotArgument, withSnapshotArgument } from './snapshot-keys.js';
import { printWarnings } from './warnings.js';

export const validateCommand: CommandSpec = {
  builder: (yargs) =>
    withSnapshotArgument(yargs)
      .options({
        schemas: stringOption('Folder of <type>.schema.json files (default: the shipped schemas/templates)'),
        'templates-from': stringOption(
          "Build the schemas from this environment's own connector templates (config name or URL)",
        ),
        'token-file': stringOption(
          'Read the token of --templates-from from this file (instead of DDS_TOKEN or tokenEnv)',
        ),
        ...CONNECTION_OPTIONS,
      })
      .conflicts('schemas', 'templates-from'),
  examples: [
    { command: '$0 validate prod.snapshot.jsonl', describe: 'Check against the shipped template schemas' },
    {
      command: '$0 validate prod.snapshot.jsonl --templates-from prod',
      describe: "Check against prod's own templates (and that prod holds the scanner groups and credentials)",
    },
    { command: '$0 validate prod.snapshot.jsonl --json > report.json', describe: 'The whole report as JSON' },
  ],
  async run(args, ctx) {
    const snapshot = await readSnapshotArgument(args, ctx);
    const templatesFrom = readStringOption(args, 'templates-from', 'a path');
    const report = await validateSnapshotFile(
      {
        snapshot: snapshot.path,
        label: snapshot.label,
        catalog:
          templatesFrom !== undefined
            ? { kind: 'environment' }
            : { kind: 'shipped', dir: readPathOption(args, 'schemas', ctx.io.cwd, 'a path') },
      },
      {
        // resolveSide reads the side's option by name: present --templates-from as --env.
        resolveTemplatesSource: () => resolveSide(ctx, { ...args, env: templatesFrom }, 'env'),
        ...runPorts(ctx),
      },
    );
    printReport(report, ctx);
    return report.valid ? ExitCode.ok : ExitCode.validation;
  },
};

function formatProblem(problem: ValidationProblem): string {
  return `${problem.entry} (${problem.type}) ${problem.path || '/'}: ${problem.message}`;
}

function toJsonReport(report: ValidateResult): Record<string, unknown> {
  const strip = ({ kind, entry, type, path, message }: ValidationProblem) => ({
    kind,
    entry,
    type,
    path,
    message,
  });
  const { scannerGroups, credentials, certificates } = report.references;
  return {
    snapshot: report.snapshot,
    valid: report.valid,
    entryCount: report.entryCount,
    invalidCount: report.invalidCount,
    errors: report.errors.map(strip),
    warnings: report.warnings.map(strip),
    catalogWarnings: report.catalogWarnings,
    references: {
      scannerGroups: Object.fromEntries(scannerGroups),
      credentials: Object.fromEntries(credentials),
      certificates: Object.fromEntries(certificates),
    },
    ...(report.referenceCheck
      ? {
          referenceProblems: report.referenceCheck.problems,
          referenceWarnings: report.referenceCheck.warnings,
        }
      : {}),
  };
}

function printReport(report: ValidateResult, ctx: CliContext): void {
  const out = ctx.out;
  if (ctx.globals.json) {
    out.json(toJsonReport(report));
    return;
  }
  for (const warning of report.catalogWarnings) out.warn(warning);
  printValidationWarnings(report.warnings, ctx);
  for (const error of report.errors) out.result(formatProblem(error));
  // Offline, references are only listed (import's pre-flight checks them); --templates-from E checks on E.
  const check = report.referenceCheck;
  for (const warning of check?.warnings ?? []) out.warn(warning);
  for (const problem of check?.problems ?? [])
    out.result(`${problem.entry} ${problem.path}: ${problem.message}`);
  out.result(
    `References: ${formatReferenceNeeds(report.references)} (${check ? 'checked against --templates-from' : 'checked by import'})`,
  );
  const checked = `${countOf(report.entryCount, 'entry', 'entries')} checked`;
  const missing = check?.problems.length ?? 0;
  if (report.valid) out.result(`${checked}: all valid`);
  else
    out.result(
      `${checked}: ${report.invalidCount} invalid (${countOf(report.errors.length, 'problem')})${missing > 0 ? `, ${countOf(missing, 'missing reference')}` : ''}`,
    );
}

/** Warnings collapsed by message; the masked-secrets line also names the command that writes overrides. */
function printValidationWarnings(warnings: readonly ValidationProblem[], ctx: CliContext): void {
  const masked = warnings.filter((w) => w.kind === 'masked-secret');
  const hints: Record<string, string> = {};
  if (masked.length > 0) {
    const entries = new Set(masked.map((w) => w.entry)).size;
    const group = masked[0]?.message ?? '';
    hints[group] =
      `${countOf(entries, 'entry', 'entries')} (${summarizeFields(masked)}); 'dds-migrate overrides init' writes an overrides file for them`;
  }
  printWarnings(
    ctx,
    warnings.map((w) => ({ group: w.message, where: `${w.entry} ${w.path || '/'}`, text: formatProblem(w) })),
    hints,
  );
}

/** `password: 12, aws_secret_key: 3`, most frequent first. */
function summarizeFields(problems: readonly ValidationProblem[]): string {
  const counts = new Map<string, number>();
  for (const p of problems) {
    const field = p.path.replace(/^\//, '').replace(/\/\d+\//g, '/*/');
    counts.set(field, (counts.get(field) ?? 0) + 1);
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([field, count]) => `${field}: ${count}`)
    .join(', ');
}
