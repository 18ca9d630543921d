/**
 * `dds-migrate verify SNAPSHOT --env E`: the options, the call of the verify workflow
 * ({@link verifyEnvironment} in src/verify/verify-environment.ts) and the rendering of its events and
 * result: a summary a person reads in five seconds (counts per state, complete or not, regressions),
 * then the details; or one JSON document (`--format json`, `--json`).
 *
 * Exit 0: complete and no regression; 1: something missing, different or regressed; 2, 4, 5 as usual.
 */

import { collectIgnoreFields } from '../diff-workflow/diff-sources.js';
import { countOf } from '../display-name.js';
import { assertNever, ExitCode, UsageError } from '../errors.js';
import { DEFAULT_TEST_CONCURRENCY, DEFAULT_TEST_RATE } from '../verify/test-connections.js';
import { type VerifyEvent, type VerifyOptions, verifyEnvironment } from '../verify/verify-environment.js';
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
import { buildVerifyJson, renderVerifyText } from './verify-render.js';

/** Check the command line once (UsageError, exit 2). */
export async function readVerifyOptions(args: ParsedArgs, ctx: CliContext): Promise<VerifyOptions> {
  const snapshot = await readSnapshotArgument(args, ctx);
  const testConnections = args.testConnections === true;
  const rate = readRateOption(args.rate);
  if (rate !== undefined && !testConnections) {
    throw new UsageError('--rate sets the pace of the connection tests: give it with --test-connections');
  }
  const report = readPathOption(args, 'report', ctx.io.cwd);
  const schemas = readPathOption(args, 'schemas', ctx.io.cwd, 'a folder');
  const overrides = readPathOption(args, 'overrides', ctx.io.cwd, 'a file');
  const config = await runEnvironments(ctx).config();
  return {
    snapshot: snapshot.path,
    snapshotLabel: snapshot.label,
    testConnections,
    rate,
    report,
    ignoreFields: collectIgnoreFields(args.ignoreField, config),
    schemas,
    overrides,
  };
}

/** An event renderer for one run: progress on stderr. */
export function createVerifyEventRenderer(ctx: CliContext): (event: VerifyEvent) => void {
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

/** Run the verify: read the options, call {@link verifyEnvironment}, render its events and result. */
export async function runVerifyCommand(args: ParsedArgs, ctx: CliContext): Promise<ExitCode> {
  const format = chooseFormat(args.format, ctx.globals.json, ['text', 'json'], 'text');
  const options = await readVerifyOptions(args, ctx);
  const result = await verifyEnvironment(
    options,
    {
      ...envPorts(ctx, args),
      env: ctx.io.env,
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
      `${countOf(t.unknown + t.error, 'connection test')} gave no verdict (unknown answer or refused request); see the details`,
    );
  }
  return result.verified ? ExitCode.ok : ExitCode.partial;
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
  run: runVerifyCommand,
};
