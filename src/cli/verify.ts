/**
 * `dds-migrate verify SNAPSHOT --env E`: the options, the call of the verify workflow
 * ({@link verifyEnvironment} in src/verify/verify-environment.ts) and the rendering of its events and
 * result: a summary a person reads in five seconds (counts per state, complete or not, regressions),
 * then the details; or one JSON document (`--format json`, `--json`).
 *
 * Exit 0: complete and no regression; 1: something missing, different or regressed; 2, 4, 5 as usual.
 */
import { resolve } from 'node:path';
import cliProgress from 'cli-progress';
import type { FieldChange } from '../diff/types.js';
import { collectIgnoreFields } from '../diff-workflow/diff-sources.js';
import { ExitCode, UsageError } from '../errors.js';
import { DEFAULT_TEST_CONCURRENCY, DEFAULT_TEST_RATE } from '../verify/test-connections.js';
import type { TestVerdict, VerifyCounts, VerifyItem } from '../verify/verdict.js';
import {
  type VerifyEvent,
  type VerifyOptions,
  type VerifyResult,
  verifyEnvironment,
} from '../verify/verify-environment.js';
import type { CommandSpec, ParsedArgs } from './command.js';
import type { CliContext } from './context.js';
import { createEnvironmentClient, getConfig, resolveSide, withEnvironmentOptions } from './environment.js';
import { checkNumberOption, RATE_RANGE, readStringOption } from './options.js';
import { assertFormatFitsJson } from './render.js';

/** Output formats of `verify`. */
export const VERIFY_FORMATS = ['text', 'json'] as const;
/** One output format of `verify`. */
export type VerifyFormat = (typeof VERIFY_FORMATS)[number];

function chooseFormat(args: ParsedArgs, ctx: CliContext): VerifyFormat {
  const format = args.format;
  assertFormatFitsJson(format, ctx.globals.json);
  if (format === undefined) return ctx.globals.json ? 'json' : 'text';
  if (format === 'text' || format === 'json') return format;
  throw new UsageError(`Expected --format to be text or json, got ${JSON.stringify(format)}`);
}

/** Check the command line once (UsageError, exit 2). */
export async function readVerifyOptions(args: ParsedArgs, ctx: CliContext): Promise<VerifyOptions> {
  const snapshot = readStringOption(args, 'snapshot', 'snapshot');
  if (snapshot === undefined) throw new UsageError('Missing SNAPSHOT', { hint: 'See --help' });
  const testConnections = args.testConnections === true;
  let rate: number | undefined;
  if (args.rate !== undefined) {
    const value = typeof args.rate === 'string' && args.rate.trim() !== '' ? Number(args.rate) : Number.NaN;
    rate = checkNumberOption(value, 'rate', RATE_RANGE, String(args.rate));
    if (!testConnections) {
      throw new UsageError('--rate sets the pace of the connection tests: give it with --test-connections');
    }
  }
  const report = readStringOption(args, 'report', 'report');
  const schemas = readStringOption(args, 'schemas', 'schemas', 'a folder');
  const config = await getConfig(ctx);
  return {
    snapshot: resolve(ctx.io.cwd, snapshot),
    snapshotLabel: snapshot,
    testConnections,
    rate,
    report: report === undefined ? undefined : resolve(ctx.io.cwd, report),
    ignoreFields: collectIgnoreFields(args.ignoreField, config),
    schemas: schemas === undefined ? undefined : resolve(ctx.io.cwd, schemas),
  };
}

/** A progress bar of the connection tests on stderr, on a TTY only. */
function createProgress(ctx: CliContext, total: number) {
  if (!ctx.out.showProgress || total === 0) return undefined;
  const bar = new cliProgress.SingleBar(
    {
      stream: ctx.io.stderr as NodeJS.WritableStream as never,
      format: 'tests |{bar}| {value}/{total} | ETA {eta_formatted} | failing {failing}',
      hideCursor: true,
      // Cleared when done: the summary follows on stdout, the bar must not stay between.
      clearOnComplete: true,
      etaBuffer: 20,
    },
    cliProgress.Presets.shades_classic,
  );
  let failing = 0;
  bar.start(total, 0, { failing });
  return {
    tick(verdict: TestVerdict) {
      if (verdict.kind !== 'passed') failing += 1;
      bar.increment(1, { failing });
    },
    stop() {
      bar.stop();
    },
  };
}

/** An event renderer for one run: progress on stderr. */
export function createVerifyEventRenderer(ctx: CliContext): (event: VerifyEvent) => void {
  let progress: ReturnType<typeof createProgress>;
  return (event) => {
    switch (event.kind) {
      case 'sides-read':
        ctx.out.info(
          `snapshot ${event.snapshot.label}: ${event.snapshot.connections} connections; environment ${event.environment.label}: ${event.environment.connections} connections`,
        );
        return;
      case 'tests-started':
        ctx.out.info(
          `Testing ${event.total} present connection${event.total === 1 ? '' : 's'} (concurrency ${event.concurrency}${
            event.rate === undefined ? '' : `, rate ${event.rate} tests/s`
          })`,
        );
        progress = createProgress(ctx, event.total);
        return;
      case 'test-settled':
        progress?.tick(event.verdict);
        return;
      case 'tests-ended':
        // Also when the run throws: the bar must not be left drawing over the error line.
        progress?.stop();
        return;
      case 'file-written':
        ctx.out.info(`Report: ${event.path}`);
        return;
      default: {
        const unknown: never = event;
        throw new Error(`unknown verify event ${JSON.stringify(unknown)}`);
      }
    }
  };
}

function formatCounts(counts: VerifyCounts): string {
  return `${counts.present} present, ${counts.different} different, ${counts.missing} missing, ${counts.extra} extra`;
}

function showValue(field: FieldChange, side: 'from' | 'to'): string {
  if (!Object.hasOwn(field, side)) return '(absent)';
  return JSON.stringify(field[side]) ?? 'null';
}

function describeTest(verdict: TestVerdict): string {
  const said = 'message' in verdict && verdict.message ? `: ${verdict.message}` : '';
  switch (verdict.kind) {
    case 'passed':
      return `passed${said}`;
    case 'regression':
      return `REGRESSION (the source's last test had passed; fails now)${said}`;
    case 'known-bad':
      return `known-bad (${
        verdict.recorded === 'failed' ? "the source's last test had failed too" : 'no earlier test recorded'
      })${said}`;
    case 'unknown':
      return `unknown (an answer of no known shape, not read as a pass or a failure)${said}`;
    case 'error': {
      return `error (the service refused the test request)${said}`;
    }
    default: {
      const unknown: never = verdict;
      throw new Error(`unknown test verdict ${JSON.stringify(unknown)}`);
    }
  }
}

/** The text form: summary first (five seconds), then the details. */
export function renderVerifyText(result: VerifyResult): string[] {
  const lines: string[] = [];
  const regressions = result.items.filter((i) => i.test?.kind === 'regression').map((i) => i.name);
  const verdict = result.complete ? 'complete' : 'NOT COMPLETE';
  lines.push(
    `Verify of ${result.environment} against ${result.snapshot}: ${verdict}${
      regressions.length > 0 ? `, ${regressions.length} REGRESSION${regressions.length === 1 ? '' : 'S'}` : ''
    }`,
  );
  lines.push(`  connections:   ${formatCounts(result.connections)}`);
  if (result.scanProfiles) lines.push(`  scan profiles: ${formatCounts(result.scanProfiles)}`);
  else lines.push('  scan profiles: not compared (the snapshot holds none)');
  if (result.tests) {
    const t = result.tests;
    const inconclusive = t.unknown + t.error;
    lines.push(
      `  tests:         ${t.passed} passed, ${t.regression} regression, ${t['known-bad']} known-bad${
        inconclusive > 0 ? `, ${t.unknown} unknown, ${t.error} error` : ''
      }`,
    );
  }
  if (regressions.length > 0) lines.push(`  regressions:   ${regressions.join(', ')}`);

  const detail = (title: string, items: readonly VerifyItem[], render: (item: VerifyItem) => string[]) => {
    if (items.length === 0) return;
    lines.push('', title);
    for (const item of items) lines.push(...render(item));
  };
  const label = (item: VerifyItem) =>
    `${item.object === 'scan profile' ? 'scan profile ' : ''}${item.name}${item.type ? ` (${item.type})` : ''}`;
  const byState = (state: VerifyItem['state']) => result.items.filter((i) => i.state === state);
  detail('Missing (in the snapshot, not in the environment):', byState('missing'), (i) => [
    `  - ${label(i)}${i.note ? `: ${i.note}` : ''}`,
  ]);
  detail('Different (fields as snapshot -> environment):', byState('different'), (i) => [
    `  ~ ${label(i)}`,
    ...(i.fields ?? []).map((f) => `      ${f.path}: ${showValue(f, 'from')} -> ${showValue(f, 'to')}`),
  ]);
  detail('Extra (in the environment, not in the snapshot):', byState('extra'), (i) => [`  + ${label(i)}`]);
  detail(
    'Tests that did not pass:',
    result.items.filter((i) => i.test !== undefined && i.test.kind !== 'passed'),
    (i) => [`  ! ${label(i)}: ${describeTest(i.test as TestVerdict)}`],
  );
  const masked = result.items.reduce((n, i) => n + (i.notComparable?.length ?? 0), 0);
  if (masked > 0) {
    lines.push(
      '',
      `${masked} field${masked === 1 ? ' was' : 's were'} masked by the service and not compared (secrets; --format json lists them)`,
    );
  }
  return lines;
}

/** The JSON form (`--format json`, `--json`). */
export function buildVerifyJson(result: VerifyResult) {
  return {
    ok: result.verified,
    complete: result.complete,
    snapshot: result.snapshot,
    environment: result.environment,
    connections: result.connections,
    scanProfiles: result.scanProfiles ?? null,
    tests: result.tests ?? null,
    regressions: result.items.filter((i) => i.test?.kind === 'regression').map((i) => i.name),
    report: result.reportPath ?? null,
    items: result.items,
  };
}

/** Run the verify: read the options, call {@link verifyEnvironment}, render its events and result. */
export async function runVerifyCommand(args: ParsedArgs, ctx: CliContext): Promise<ExitCode> {
  const format = chooseFormat(args, ctx);
  const options = await readVerifyOptions(args, ctx);
  const result = await verifyEnvironment(
    options,
    {
      resolveEnvironment: async () => (await resolveSide(ctx, args, 'env')).environment,
      createClient: (environment, clientOptions) => createEnvironmentClient(ctx, environment, clientOptions),
      signal: ctx.signal,
    },
    createVerifyEventRenderer(ctx),
  );
  if (format === 'json') ctx.out.json(buildVerifyJson(result));
  else ctx.out.result(renderVerifyText(result).join('\n'));
  ctx.log.info(
    { connections: result.connections, tests: result.tests, complete: result.complete },
    'verify done',
  );
  const t = result.tests;
  if (t && t.unknown + t.error > 0) {
    ctx.out.warn(
      `${t.unknown + t.error} connection test${t.unknown + t.error === 1 ? '' : 's'} gave no verdict (unknown answer or refused request); see the details`,
    );
  }
  return result.verified ? ExitCode.ok : ExitCode.partial;
}

/** `verify <snapshot>`. */
export const verifyCommand: CommandSpec = {
  command: 'verify <snapshot>',
  describe: 'Check that an environment is a complete, working restore of a snapshot',
  builder: (yargs) =>
    withEnvironmentOptions(yargs, ['env'])
      .positional('snapshot', { type: 'string', describe: 'A *.snapshot.jsonl file written by export' })
      .option('test-connections', {
        type: 'boolean',
        describe:
          'Also test each present connection with the service (POST ds-connection-test, stored secret); a failure that passed at export is a regression',
      })
      .option('rate', {
        type: 'string',
        requiresArg: true,
        describe: `Connection tests per second (default ${DEFAULT_TEST_RATE}, or the environment's rate if lower; ${DEFAULT_TEST_CONCURRENCY} at once at most)`,
      })
      .option('format', {
        type: 'string',
        choices: VERIFY_FORMATS,
        describe: 'text (summary, then details) or json (default text; json with --json)',
      })
      .option('report', {
        type: 'string',
        requiresArg: true,
        describe: 'Write one JSON line per object (its state and test verdict) here',
      })
      .option('ignore-field', {
        type: 'string',
        array: true,
        requiresArg: true,
        describe:
          'Ignore a top-level field name or a JSON pointer, as diff does (e.g. a field set by overrides)',
      })
      .option('schemas', {
        type: 'string',
        requiresArg: true,
        describe: 'Template schemas folder whose x-secret fields are masked (default: the shipped ones)',
      }),
  examples: [
    {
      command: '$0 verify prod.snapshot.jsonl --env dr',
      describe: 'Is every connection of the snapshot in dr, unchanged?',
    },
    {
      command: '$0 verify prod.snapshot.jsonl --env dr --test-connections --report verify.jsonl',
      describe: 'Also test each restored connection; one JSON line per object in verify.jsonl',
    },
  ],
  run: runVerifyCommand,
};
