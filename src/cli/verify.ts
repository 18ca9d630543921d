/** `dds-migrate verify SNAPSHOT --env E`: a summary a person reads in five seconds, then the details. */
import { showValue } from '../diff/render-text.js';
import { collectIgnoreFields } from '../diff-workflow/diff-sources.js';
import { countOf, displayName } from '../display-name.js';
import { assertNever, ExitCode, UsageError } from '../errors.js';
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
import { envPorts, runEnvironments, withEnvironmentOptions } from './environment.js';
import {
  booleanOption,
  formatOption,
  listOption,
  readPathOption,
  readRateOption,
  stringOption,
} from './options.js';
import { type CountingBar, startCountingBar } from './progress-bar.js';
import { chooseFormat } from './render.js';
import { readSnapshotArgument, withSnapshotArgument } from './snapshot-keys.js';

async function readVerifyOptions(args: ParsedArgs, ctx: CliContext): Promise<VerifyOptions> {
  const snapshot = await readSnapshotArgument(args, ctx);
  const testConnections = args.testConnections === true;
  const rate = readRateOption(args.rate);
  if (rate !== undefined && !testConnections) {
    throw new UsageError('--rate sets the pace of the connection tests: give it with --test-connections');
  }
  return {
    snapshot: snapshot.path,
    snapshotLabel: snapshot.label,
    testConnections,
    rate,
    report: readPathOption(args, 'report', ctx.io.cwd),
    schemas: readPathOption(args, 'schemas', ctx.io.cwd, 'a folder'),
    overrides: readPathOption(args, 'overrides', ctx.io.cwd, 'a file'),
    ignoreFields: collectIgnoreFields(args.ignoreField, await runEnvironments(ctx).config()),
  };
}

function createVerifyEventRenderer(ctx: CliContext): (event: VerifyEvent) => void {
  let progress: CountingBar | undefined;
  return (event) => {
    switch (event.kind) {
      case 'sides-read':
        ctx.out.info(
          `snapshot ${event.snapshot.label}: ${countOf(event.snapshot.connections, 'connection')}; environment ${event.environment.label}: ${countOf(event.environment.connections, 'connection')}`,
        );
        return;
      case 'tests-started':
        ctx.out.info(
          `Testing ${countOf(event.total, 'present connection')} (concurrency ${event.concurrency}${
            event.rate === undefined ? '' : `, rate ${event.rate} tests/s`
          })`,
        );
        progress = startCountingBar(
          ctx,
          event.total,
          'tests |{bar}| {value}/{total} | ETA {eta_formatted} | failing {failed}',
          20,
        );
        return;
      case 'test-settled':
        progress?.tick(event.verdict.kind !== 'passed');
        return;
      case 'tests-ended':
        // Also when the run throws: the bar must not be left drawing over the error line.
        progress?.stop();
        return;
      case 'file-written':
        ctx.out.info(`Report: ${event.path}`);
        return;
      default:
        assertNever(event, 'verify event');
    }
  };
}

function formatCounts(counts: VerifyCounts): string {
  const skipped = counts.skipped > 0 ? `, ${counts.skipped} skipped` : '';
  return `${counts.present} present, ${counts.different} different, ${counts.missing} missing, ${counts.extra} extra${skipped}`;
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
    case 'error':
      return `error (the service refused the test request)${said}`;
  }
}

function renderVerifyText(result: VerifyResult): string[] {
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
    `${item.object === 'scan profile' ? 'scan profile ' : ''}${displayName(item.name)}${item.type ? ` (${item.type})` : ''}`;
  const byState = (state: VerifyItem['state']) => result.items.filter((i) => i.state === state);
  const noted = (i: VerifyItem) => [`  - ${label(i)}${i.note ? `: ${i.note}` : ''}`];
  detail('Missing (in the snapshot, not in the environment):', byState('missing'), noted);
  detail(
    'Skipped (in the snapshot, left out by the import by design; not a failure):',
    byState('skipped'),
    noted,
  );
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

function buildVerifyJson(result: VerifyResult) {
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

export const verifyCommand: CommandSpec = {
  builder: (yargs) =>
    withEnvironmentOptions(withSnapshotArgument(yargs), ['env']).options({
      'test-connections': booleanOption(
        'Also test each present connection with the service (POST ds-connection-test, stored secret); a failure that passed at export is a regression',
      ),
      rate: stringOption(
        `Connection tests per second (default ${DEFAULT_TEST_RATE}, or the environment's rate if lower; ${DEFAULT_TEST_CONCURRENCY} at once at most)`,
      ),
      format: formatOption(
        ['text', 'json'],
        'text (summary, then details) or json (default text; json with --json)',
      ),
      report: stringOption('Write one JSON line per object (its state and test verdict) here'),
      overrides: stringOption(
        "The import's overrides file: a field it sets is compared with its value (secrets are never compared)",
      ),
      'ignore-field': listOption(
        'Ignore a top-level field name or a JSON pointer, as diff does (e.g. a field set by overrides)',
      ),
      schemas: stringOption(
        'Template schemas folder whose x-secret fields are masked (default: the shipped ones)',
      ),
    }),
  examples: [
    {
      command: '$0 verify prod.snapshot.jsonl --env dr',
      describe: 'Is every connection of the snapshot in dr, unchanged?',
    },
    {
      command: '$0 verify prod.snapshot.jsonl --env dr --overrides dr-overrides.json',
      describe: 'The same after an import with overrides: fields they set are compared with their values',
    },
    {
      command: '$0 verify prod.snapshot.jsonl --env dr --test-connections --report verify.jsonl',
      describe: 'Also test each restored connection; one JSON line per object in verify.jsonl',
    },
  ],
  async run(args, ctx) {
    const format = chooseFormat(args.format, ctx.globals.json, ['text', 'json'], 'text');
    const options = await readVerifyOptions(args, ctx);
    const result = await verifyEnvironment(options, envPorts(ctx, args), createVerifyEventRenderer(ctx));
    if (format === 'json') ctx.out.json(buildVerifyJson(result));
    else ctx.out.result(renderVerifyText(result).join('\n'));
    ctx.log.info(
      { connections: result.connections, tests: result.tests, complete: result.complete },
      'verify done',
    );
    const t = result.tests;
    if (t && t.unknown + t.error > 0) {
      ctx.out.warn(
        `${countOf(t.unknown + t.error, 'connection test')} gave no verdict (unknown answer or refused request); see the details`,
      );
    }
    return result.verified ? ExitCode.ok : ExitCode.partial;
  },
};
