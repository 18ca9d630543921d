// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:NAME}" is a literal overrides placeholder, not a template
/**
 * `dds-migrate import SNAPSHOT --to E`: creates the snapshot's connections in E, one POST at a time,
 * throttled, retrying only where it is safe, journaled so that re-running the same command resumes and
 * no connection is ever created twice. The steps: options checked -> snapshot verified -> overrides
 * read -> target opened -> journal locked -> target listed -> plan -> pre-flight -> (dry run: print) ->
 * run -> report, id map, summary.
 */
import { unlink } from 'node:fs/promises';
import { resolve } from 'node:path';
import cliProgress from 'cli-progress';
import { createConnection, getConnectionByName, listConnections } from '../api/connections.js';
import { createRetryBudget, type HttpClient } from '../api/http.js';
import type { Connection } from '../api/types.js';
import { stripServerManaged } from '../connections/server-managed.js';
import { ExitCode, PreflightError, type Problem, UsageError } from '../errors.js';
import { checkWritableOutputs } from '../files.js';
import {
  defaultJournalPath,
  type JournalEntryState,
  normaliseTargetUrl,
  openJournal,
  peekJournal,
} from '../importer/journal.js';
import {
  buildIdMap,
  buildReport,
  countOutcomes,
  formatSummary,
  type ReportLine,
  serializeReport,
  writeScrubbedFile,
} from '../importer/outputs.js';
import {
  applyOverrides,
  EMPTY_OVERRIDES,
  findUnusedOverrides,
  loadOverrides,
  type Overrides,
  resolveOverrides,
} from '../importer/overrides.js';
import {
  describeStep,
  type ImportPlan,
  isSendStep,
  ON_CONFLICT_CHOICES,
  type OnConflict,
  type PreparedEntry,
  planImport,
} from '../importer/plan.js';
import {
  checkEntryForSend,
  checkPreflight,
  type EntryTemplates,
  formatProblem,
} from '../importer/preflight.js';
import { type EntryOutcome, runImport } from '../importer/run.js';
import { createRateLimiter, type RateLimiter } from '../importer/throttle.js';
import { loadCatalogFromEnvironment, loadShippedCatalog, type TemplateCatalog } from '../schema/catalog.js';
import { registerSecretsOf, scrub } from '../secrets.js';
import { loadSnapshot } from '../snapshot/read.js';
import { TOOL_NAME, TOOL_VERSION } from '../version.js';
import type { CommandSpec, ParsedArgs } from './command.js';
import type { CliContext } from './context.js';
import { openEnvironment, withEnvironmentOptions } from './environment.js';
import {
  CONCURRENCY_RANGE,
  checkNumberOption,
  parseListOption,
  RATE_RANGE,
  readNumberOption,
  readStringOption,
} from './options.js';

/** Default `--concurrency` when neither the flag nor the environment's config sets one. */
export const DEFAULT_IMPORT_CONCURRENCY = 4;

/** The import's options, checked once. */
export interface ImportOptions {
  readonly snapshot: string;
  readonly concurrency: number | undefined;
  readonly rate: number | undefined;
  readonly onConflict: OnConflict;
  readonly overrides: string | undefined;
  readonly only: ReadonlySet<string> | undefined;
  readonly maxChanges: number | undefined;
  readonly dryRun: boolean;
  readonly journal: string | undefined;
  readonly idMap: string | undefined;
  readonly report: string | undefined;
  readonly confirm: string | undefined;
  readonly allowSameSource: boolean;
  readonly schemas: string | undefined;
  readonly templatesFromTarget: boolean;
}

/** `--rate` is read from its text, so that the message can quote what was typed (`got fast`). */
function readRate(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const rate = typeof value === 'string' && value.trim() !== '' ? Number(value) : Number.NaN;
  return checkNumberOption(rate, 'rate', RATE_RANGE, String(value));
}

/** Check the command line once (UsageError, exit 2). */
export function readImportOptions(args: ParsedArgs, cwd: string): ImportOptions {
  const snapshot = readStringOption(args, 'snapshot', 'snapshot');
  if (snapshot === undefined) throw new UsageError('Missing SNAPSHOT', { hint: 'See --help' });
  const rate = readRate(args.rate);
  const onConflict = (args.onConflict ?? 'skip') as string;
  if (!ON_CONFLICT_CHOICES.includes(onConflict as OnConflict)) {
    throw new UsageError(
      `Expected --on-conflict to be one of ${ON_CONFLICT_CHOICES.join(', ')}, got ${onConflict}`,
    );
  }
  const onlyNames = parseListOption(args.only, 'only');
  const only = onlyNames === undefined ? undefined : new Set(onlyNames);
  const path = (key: string, flag: string) => {
    const p = readStringOption(args, key, flag);
    return p === undefined ? undefined : resolve(cwd, p);
  };
  const schemas = path('schemas', 'schemas');
  const templatesFromTarget = args.templatesFromTarget === true;
  if (schemas !== undefined && templatesFromTarget) {
    throw new UsageError('Give either --schemas or --templates-from-target, not both');
  }
  return {
    snapshot: resolve(cwd, snapshot),
    concurrency: readNumberOption(args, 'concurrency', 'concurrency', CONCURRENCY_RANGE),
    rate,
    onConflict: onConflict as OnConflict,
    overrides: path('overrides', 'overrides'),
    only,
    maxChanges: readNumberOption(args, 'maxChanges', 'max-changes', { min: 0, integer: true }),
    dryRun: args.dryRun === true,
    journal: path('journal', 'journal'),
    idMap: path('idMap', 'id-map'),
    report: path('report', 'report'),
    confirm: readStringOption(args, 'confirm', 'confirm'),
    allowSameSource: args.allowSameSource === true,
    schemas,
    templatesFromTarget,
  };
}

/** Snapshot entries ready to send: server-managed fields dropped, then overrides applied. */
function prepareEntries(
  entries: readonly Connection[],
  overrides: Overrides,
  catalog: TemplateCatalog,
): PreparedEntry[] {
  return entries.map((entry) => {
    const body = applyOverrides(stripServerManaged(entry) as Connection, overrides);
    registerSecretsOf(body, catalog.secretFields(entry.type));
    return {
      name: entry.name,
      type: entry.type,
      sourceId: typeof entry._id === 'string' ? entry._id : undefined,
      body,
    };
  });
}

async function listTarget(
  client: HttpClient,
  signal: AbortSignal,
): Promise<{ name: string; _id: string | undefined }[]> {
  const out: { name: string; _id: string | undefined }[] = [];
  for await (const c of listConnections(client, { signal })) {
    out.push({ name: c.name, _id: typeof c._id === 'string' ? c._id : undefined });
  }
  return out;
}

/**
 * The next step for a refused pre-flight: the overrides advice only when a field of an entry is at
 * fault (masked, empty or missing values are what --overrides supplies), not for run-wide refusals
 * such as a protected target or --max-changes.
 */
function preflightHint(problems: readonly Problem[]): string {
  const fieldProblems = problems.some((p) => p.path !== undefined);
  return fieldProblems
    ? 'Fix the problems listed above and re-run (masked, empty or missing values: supply them with --overrides, e.g. "${env:VAR}"; --dry-run shows the plan)'
    : 'Fix the problems listed above and re-run (--dry-run shows the plan)';
}

/** The pre-flight's problems on stderr, scrubbed, under a heading given `N problem(s)`. */
function printProblems(
  ctx: CliContext,
  problems: readonly Problem[],
  heading: (count: string) => string,
): void {
  ctx.io.stderr.write(`${heading(`${problems.length} problem${problems.length === 1 ? '' : 's'}`)}\n`);
  for (const p of problems) ctx.io.stderr.write(`  - ${scrub(formatProblem(p))}\n`);
}

async function writeOutputs(
  options: ImportOptions,
  report: readonly ReportLine[],
  ctx: CliContext,
): Promise<void> {
  if (options.report) {
    await writeScrubbedFile(options.report, serializeReport(report));
    ctx.out.info(`Report: ${options.report}`);
  }
  if (options.idMap) {
    await writeScrubbedFile(options.idMap, `${JSON.stringify(buildIdMap(report), null, 2)}\n`);
    ctx.out.info(`Id map: ${options.idMap}`);
  }
}

/** A progress bar on stderr, on a TTY only. */
function createProgress(ctx: CliContext, total: number) {
  if (!ctx.out.showProgress || total === 0) return undefined;
  const bar = new cliProgress.SingleBar(
    {
      stream: ctx.io.stderr as NodeJS.WritableStream as never,
      format: 'import |{bar}| {value}/{total} | {speed} req/s | ETA {eta_formatted} | failed {failed}',
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 50,
    },
    cliProgress.Presets.shades_classic,
  );
  const started = Date.now();
  let failed = 0;
  bar.start(total, 0, { speed: '0.0', failed: 0 });
  return {
    tick(outcome: EntryOutcome) {
      if (outcome.kind === 'failed') failed += 1;
      const done = bar.getProgress() * total + 1;
      const speed = (done / Math.max(0.001, (Date.now() - started) / 1000)).toFixed(1);
      bar.increment(1, { speed, failed });
    },
    stop() {
      bar.stop();
    },
  };
}

function planJson(plan: ImportPlan) {
  return plan.steps.map((s) => ({
    kind: s.kind,
    name: s.name,
    type: s.type,
    ...('targetName' in s && s.targetName !== s.name ? { targetName: s.targetName } : {}),
    ...('targetId' in s && s.targetId ? { targetId: s.targetId } : {}),
    ...(s.kind === 'invalid' ? { problems: s.problems } : {}),
  }));
}

/** Run the import (the command's body). */
export async function runImportCommand(args: ParsedArgs, ctx: CliContext): Promise<ExitCode> {
  const options = readImportOptions(args, ctx.io.cwd);
  const snapshot = await loadSnapshot(options.snapshot, { signal: ctx.signal });
  const rawOverrides = options.overrides ? await loadOverrides(options.overrides) : EMPTY_OVERRIDES;
  const { overrides } = resolveOverrides(rawOverrides, ctx.io.env);
  for (const unused of findUnusedOverrides(overrides, snapshot.entries)) {
    ctx.out.warn(`overrides ${unused} matches no entry of the snapshot`);
  }
  if (options.only) {
    const names = new Set(snapshot.entries.map((e) => e.name));
    const unknown = [...options.only].filter((n) => !names.has(n));
    if (unknown.length > 0) {
      throw new UsageError(`--only names connections that are not in the snapshot: ${unknown.join(', ')}`, {
        hint: 'Check the names (they are case-sensitive)',
      });
    }
  }

  // One budget and one throttle for every request of the run; both are sized once the plan is known.
  const budget = createRetryBudget(0);
  let limiter: RateLimiter | undefined;
  const { environment, client } = await openEnvironment(ctx, args, 'to', {
    retryBudget: budget,
    onRateLimited: (ms) => limiter?.onRateLimited(ms),
  });
  let journal: Awaited<ReturnType<typeof openJournal>> | undefined;
  try {
    limiter = createRateLimiter({ rate: options.rate ?? environment.rate });
    const concurrency = options.concurrency ?? environment.concurrency ?? DEFAULT_IMPORT_CONCURRENCY;
    const targetUrl = normaliseTargetUrl(environment.url);
    const binding = { snapshotSha256: snapshot.sha256, targetUrl };
    const journalPath = options.journal ?? defaultJournalPath(options.snapshot, environment.url);
    // An output that cannot be written is found now, not after the last POST.
    await checkWritableOutputs([
      { path: journalPath, flag: '--journal' },
      { path: options.report, flag: '--report' },
      { path: options.idMap, flag: '--id-map' },
    ]);

    // Listing and template look-ups are reads; the budget covers their retries too.
    budget.extend(20);
    const catalog = options.templatesFromTarget
      ? await loadCatalogFromEnvironment(client, [...new Set(snapshot.entries.map((e) => e.type))])
      : await loadShippedCatalog(options.schemas);
    const prepared = prepareEntries(snapshot.entries, overrides, catalog);

    let journalState: ReadonlyMap<string, JournalEntryState> = new Map();
    if (options.dryRun) {
      journalState = (await peekJournal(journalPath, binding))?.entries ?? new Map();
    } else {
      journal = await openJournal(journalPath, binding, { tool: `${TOOL_NAME} ${TOOL_VERSION}` });
      journalState = journal.replay.entries;
    }
    const target = await listTarget(client, ctx.signal);

    const warnings = new Set<string>();
    const templates: EntryTemplates = {
      checkEntry: (entry) => catalog.checkEntry(entry as Connection),
      requiredSecretFields: (type) => catalog.requiredSecretFields(type),
    };
    const plan = planImport({
      entries: prepared,
      target,
      journal: journalState,
      onConflict: options.onConflict,
      only: options.only,
      check: (entry) => {
        const checked = checkEntryForSend(entry, templates);
        for (const w of checked.warnings)
          warnings.add(w.type && !w.path ? `${w.type}: ${w.message}` : formatProblem(w));
        return checked.problems;
      },
    });
    for (const w of [...warnings].slice(0, 20)) ctx.out.warn(w);
    if (warnings.size > 20) ctx.out.warn(`... and ${warnings.size - 20} more warnings`);

    const problems = checkPreflight(plan, {
      maxChanges: options.maxChanges,
      target: {
        label: environment.label,
        name: environment.name,
        url: environment.url,
        protected: environment.protected,
      },
      confirm: options.confirm,
      snapshotSourceUrl: snapshot.header.source?.url,
      allowSameSource: options.allowSameSource,
      dryRun: options.dryRun,
    });

    if (options.dryRun) {
      if (ctx.globals.json) {
        ctx.out.json({
          dryRun: true,
          target: environment.label,
          counts: plan.counts,
          steps: planJson(plan),
          problems,
        });
      } else {
        ctx.out.result(
          `Plan for importing ${snapshot.entries.length} entries into ${environment.label} (dry run, nothing sent):`,
        );
        for (const step of plan.steps) ctx.out.result(`  ${describeStep(step)}`);
        const counts = Object.entries(plan.counts)
          .filter(([, n]) => n > 0)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ');
        ctx.out.result(`Total: ${counts || 'nothing to do'}`);
      }
      if (problems.length > 0) {
        printProblems(ctx, problems, (count) => `Pre-flight would refuse this import (${count}):`);
        return ExitCode.validation;
      }
      return ExitCode.ok;
    }

    if (problems.length > 0) {
      if (options.report) await writeScrubbedFile(options.report, serializeReport(buildReport(plan, [])));
      if (ctx.globals.json) ctx.out.json({ ok: false, exitCode: ExitCode.validation, problems });
      printProblems(ctx, problems, (count) => `Pre-flight found ${count}:`);
      if (journal?.fresh) {
        // Deleted while this run still holds the lock: a run that takes the lock next must not have
        // its new journal deleted under it.
        await unlink(journal.path).catch(() => undefined);
        await journal.close();
      }
      throw new PreflightError(
        `Pre-flight refused the import into ${environment.label}; nothing was sent`,
        problems,
        {
          hint: preflightHint(problems),
        },
      );
    }

    const sends = plan.steps.filter(isSendStep);
    // A sick service ends the run: about one retry per ten creates, at least 30.
    budget.extend(Math.max(30, Math.ceil(sends.length / 10)));
    ctx.out.info(
      `Importing ${sends.length} of ${plan.steps.length} entries into ${environment.label} (concurrency ${concurrency}${
        limiter.currentRate() === undefined ? '' : `, rate ${limiter.currentRate()} req/s`
      }); journal ${journalPath}`,
    );
    const activeJournal = journal;
    if (activeJournal === undefined) throw new Error('journal not open');
    const progress = createProgress(ctx, sends.length);
    let result: Awaited<ReturnType<typeof runImport>>;
    try {
      result = await runImport(
        sends,
        {
          target: {
            create: (body) => createConnection(client, body),
            lookup: (name, signal) => getConnectionByName(client, name, { signal }),
          },
          journal: activeJournal,
          limiter,
          budget,
          log: ctx.log,
          signal: ctx.signal,
          onOutcome: (o) => progress?.tick(o),
        },
        { concurrency },
      );
    } finally {
      // Also when the run throws: the bar must not be left drawing over the error line.
      progress?.stop();
    }
    await activeJournal.close();

    const report = buildReport(plan, result.outcomes);
    await writeOutputs(options, report, ctx);
    const counts = countOutcomes(report);
    if (ctx.globals.json) {
      ctx.out.json({
        ok: result.stoppedBy === undefined && counts.failed === 0,
        target: environment.label,
        counts,
        rateLimited: limiter.rateLimitedCount,
        journal: journalPath,
        report: options.report ?? null,
        idMap: options.idMap ?? null,
        failures: report.filter((l) => l.outcome === 'failed'),
        ...(result.stoppedBy ? { stoppedBy: result.stoppedBy.code } : {}),
      });
    } else {
      ctx.out.result(formatSummary(report, environment.label));
    }
    if (result.stoppedBy) throw result.stoppedBy;
    if (counts.failed > 0) {
      ctx.out.warn(
        `${counts.failed} entr${counts.failed === 1 ? 'y' : 'ies'} failed (see above); fix them and re-run to retry`,
      );
      return ExitCode.partial;
    }
    return ExitCode.ok;
  } finally {
    await journal?.close();
    client.close();
  }
}

/** `import <snapshot>`. */
export const importCommand: CommandSpec = {
  command: 'import <snapshot>',
  describe: 'Create the connections of a snapshot in an environment, resumably',
  builder: (yargs) =>
    withEnvironmentOptions(yargs, ['to'])
      .positional('snapshot', { type: 'string', describe: 'A *.snapshot.jsonl file written by export' })
      .option('concurrency', {
        type: 'number',
        requiresArg: true,
        describe: `Requests in flight at once (default: the environment's concurrency, else ${DEFAULT_IMPORT_CONCURRENCY})`,
      })
      .option('rate', {
        type: 'string',
        requiresArg: true,
        describe:
          "Requests per second, all requests of the run (default: the environment's rate, else adaptive)",
      })
      .option('on-conflict', {
        type: 'string',
        choices: ON_CONFLICT_CHOICES,
        default: 'skip',
        describe:
          'A name that already exists in the target: skip it, fail the pre-flight, or create it renamed "<name> (2)"',
      })
      .option('overrides', {
        type: 'string',
        requiresArg: true,
        describe:
          'JSON file of values to set on the way in ({all, byType, byName}; "${env:NAME}" reads a variable)',
      })
      .option('only', {
        type: 'string',
        requiresArg: true,
        describe: 'Import only these names (comma-separated)',
      })
      .option('max-changes', {
        type: 'number',
        requiresArg: true,
        describe: 'Refuse (exit 3) when more connections would be created',
      })
      .option('dry-run', {
        type: 'boolean',
        describe: 'Print the plan and the pre-flight verdict; send nothing but reads',
      })
      .option('journal', {
        type: 'string',
        requiresArg: true,
        describe: 'Journal file (default <snapshot>.<target host>.journal.jsonl)',
      })
      .option('id-map', {
        type: 'string',
        requiresArg: true,
        describe: 'Write {sourceId: {name, targetId}} here',
      })
      .option('report', {
        type: 'string',
        requiresArg: true,
        describe: 'Write one JSON line per entry (its outcome) here',
      })
      .option('confirm', {
        type: 'string',
        requiresArg: true,
        describe: 'Name of a protected target environment, to allow writing to it',
      })
      .option('allow-same-source', {
        type: 'boolean',
        describe: 'Allow importing into the environment the snapshot was exported from',
      })
      .option('schemas', {
        type: 'string',
        requiresArg: true,
        describe: 'Folder of <type>.schema.json files for the pre-flight (default: shipped)',
      })
      .option('templates-from-target', {
        type: 'boolean',
        describe: "Check entries against the target's own connector templates",
      })
      .example(
        '$0 import prod.snapshot.jsonl --to dr --overrides dr-overrides.json',
        'Import into dr, supplying masked secrets',
      )
      .example('$0 import prod.snapshot.jsonl --to dr --dry-run', 'Show what would be created')
      .example(
        '$0 import prod.snapshot.jsonl --to staging --confirm staging --rate 10',
        'Into a protected environment, at 10 req/s',
      ),
  run: runImportCommand,
};
