// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:NAME}" is a literal overrides placeholder, not a template
/** `dds-migrate import SNAPSHOT --to E`: its options and the call of {@link importSnapshot}. */
import { PreflightError, UsageError, withResumeHint } from '../errors.js';
import { importSnapshot } from '../importer/import-snapshot.js';
import { DEFAULT_IMPORT_CONCURRENCY, type ImportOptions } from '../importer/import-types.js';
import { ImportSelection } from '../importer/selection.js';
import { ON_CONFLICT_CHOICES, type OnConflict } from '../sync/plan.js';
import type { CommandSpec, ParsedArgs } from './command.js';
import { resolveSide, runPorts, withEnvironmentOptions } from './environment.js';
import { createEventRenderer, PLAN_FORMATS, renderDryRun, renderRun } from './import-render.js';
import {
  booleanOption,
  CONCURRENCY_RANGE,
  formatOption,
  numberOption,
  parseListOption,
  readNumberOption,
  readPathOption,
  readRateOption,
  readStringOption,
  stringOption,
} from './options.js';
import { chooseFormat, reportRefusal } from './render.js';
import { useSnapshotKeysOf, withSnapshotArgument } from './snapshot-keys.js';

/** Check the command line once (UsageError, exit 2). */
export function readImportOptions(args: ParsedArgs, cwd: string): ImportOptions {
  const snapshot = readPathOption(args, 'snapshot', cwd);
  if (snapshot === undefined) throw new UsageError('Missing SNAPSHOT', { hint: 'See --help' });
  const rate = readRateOption(args.rate);
  // yargs checks each value against the choices, but a repeated flag reaches here as an array.
  const onConflict = readStringOption(args, 'on-conflict', `one of ${ON_CONFLICT_CHOICES.join(', ')}`);
  const onlyNames = parseListOption(args.only, '--only', 'exact');
  const types = parseListOption(args.type, '--type');
  const only =
    onlyNames === undefined && types === undefined
      ? undefined
      : new ImportSelection(onlyNames, types === undefined ? undefined : new Set(types));
  const path = (flag: string) => readPathOption(args, flag, cwd);
  return {
    snapshot,
    concurrency: readNumberOption(args, 'concurrency', CONCURRENCY_RANGE),
    rate,
    onConflict: (onConflict ?? 'skip') as OnConflict,
    prune: args.prune === true,
    overrides: path('overrides'),
    only,
    maxChanges: readNumberOption(args, 'max-changes', { min: 0, integer: true }),
    dryRun: args.dryRun === true,
    journal: path('journal'),
    idMap: path('id-map'),
    report: path('report'),
    confirm: readStringOption(args, 'confirm'),
    allowSameSource: args.allowSameSource === true,
    schemas: path('schemas'),
    templatesFromTarget: args.templatesFromTarget === true,
    allowRun: args.allowRun === true,
  };
}

export const importCommand: CommandSpec = {
  builder: (yargs) =>
    withEnvironmentOptions(withSnapshotArgument(yargs), ['to'])
      .options({
        'allow-run': booleanOption(
          'Also create one-time scan profiles (each starts a scan at once); default: skipped',
        ),
        concurrency: numberOption(
          `Requests in flight at once (default: the environment's concurrency, else ${DEFAULT_IMPORT_CONCURRENCY})`,
        ),
        rate: stringOption(
          "Requests per second, all requests of the run (default: the environment's rate, else adaptive)",
        ),
        'on-conflict': {
          type: 'string',
          choices: ON_CONFLICT_CHOICES,
          default: 'skip',
          describe:
            'A name that already exists in the target: skip it, fail the pre-flight, create it renamed "<name> (2)", or update it (PUT) when a compared field differs',
        },
        prune: booleanOption(
          'Delete connections of the target that the snapshot does not hold (within --only and --type)',
        ),
        overrides: stringOption(
          'JSON file of values to set on the way in ({all, byType, byName}; "${env:NAME}" reads a variable)',
        ),
        only: stringOption("Import only these names or globs (comma-separated), e.g. 'finance-*'"),
        type: stringOption('Import only connections of these types (comma-separated), e.g. s3,snowflake'),
        'max-changes': numberOption(
          'Refuse (exit 3) when more changes (creates + updates + deletes) would be made',
        ),
        'dry-run': booleanOption('Print the plan and the pre-flight verdict; send nothing but reads'),
        format: formatOption(
          PLAN_FORMATS,
          "The dry run's plan as text, markdown (for a pull request or a ticket) or json (default text; json with --json)",
        ),
        journal: stringOption('Journal file (default <snapshot>.<target host>.journal.jsonl)'),
        'id-map': stringOption('Write {sourceId: {name, targetId}} here'),
        report: stringOption('Write one JSON line per entry (its outcome) here'),
        confirm: stringOption('Name of a protected target environment, to allow writing to it'),
        'allow-same-source': booleanOption(
          'Allow importing into the environment the snapshot was exported from',
        ),
        schemas: stringOption('Folder of <type>.schema.json files for the pre-flight (default: shipped)'),
        'templates-from-target': booleanOption("Check entries against the target's own connector templates"),
      })
      .conflicts('schemas', 'templates-from-target'),
  examples: [
    {
      command: '$0 import prod.snapshot.jsonl --to dr --overrides dr-overrides.json --dry-run',
      describe: 'Show what would be created, with overrides applied',
    },
    {
      command:
        '$0 import prod.snapshot.jsonl --to dr --overrides dr-overrides.json --id-map prod.dr.idmap.json --journal dr.journal.jsonl --rate 10',
      describe: 'Create what dr lacks, at 10 req/s, recording old and new ids (undo takes it back)',
    },
    {
      command:
        "$0 import prod.snapshot.jsonl --to dr --overrides dr-overrides.json --only 'finance-*' --type snowflake --on-conflict update --prune --dry-run --format markdown",
      describe: 'The plan for the finance Snowflake connections only, as Markdown for a review',
    },
    {
      command:
        '$0 import prod.snapshot.jsonl --to dr --overrides dr-overrides.json --on-conflict update --prune --dry-run',
      describe: 'Show what making dr equal to the snapshot would change (creates, updates, deletes)',
    },
  ],
  async run(args, ctx) {
    const options = readImportOptions(args, ctx.io.cwd);
    const format = chooseFormat(args.format, ctx.globals.json, PLAN_FORMATS, 'text');
    if (args.format !== undefined && !options.dryRun)
      throw new UsageError('--format applies to the plan of a dry run', {
        hint: 'Add --dry-run, or use --json for the result of a run',
      });
    await useSnapshotKeysOf(args, ctx, [args.snapshot as string]);
    const result = await importSnapshot(
      options,
      { resolveTarget: () => resolveSide(ctx, args, 'to'), ...runPorts(ctx) },
      createEventRenderer(ctx),
    ).catch((error: unknown) => {
      if (error instanceof PreflightError) reportRefusal(ctx, error.problems);
      throw withResumeHint(error, 'an import');
    });
    switch (result.kind) {
      case 'dry-run':
        return renderDryRun(ctx, result, format);
      case 'ran':
        return renderRun(ctx, result, options.onConflict === 'update');
    }
  },
};
