/** `dds-migrate emulator`: prints its URL and token, serves until Ctrl-C or SIGTERM, then closes. */
import { countOf } from '../display-name.js';
import { type EmulatorOptions, parseFaults, startEmulator } from '../emulator/index.js';
import { resolveDataOption } from '../environments/shipped-environments.js';
import { ExitCode, InputFileError, UsageError } from '../errors.js';
import type { CommandSpec, ParsedArgs } from './command.js';
import {
  booleanOption,
  numberOption,
  parseListOption,
  readNumberOption,
  readPathOption,
  readStringOption,
  stringOption,
} from './options.js';

/** `--latency`, `--jitter`: at most 10 minutes; more would overflow Node's timer and fire at once. */
const LATENCY_RANGE = { min: 0, max: 600_000, integer: false, unit: 'a number of milliseconds' } as const;

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

/** The parsed flags as emulator options (yargs holds each flag to its `choices`). */
export function buildEmulatorOptions(args: ParsedArgs, cwd: string): EmulatorOptions {
  const data = readStringOption(args, 'data');
  const dataPath = data === undefined ? undefined : resolveDataOption(data, cwd);
  const refusal = readStringOption(args, 'auth-refusal');
  const faults = readStringOption(args, 'faults');
  if (faults !== undefined) {
    try {
      parseFaults(faults);
    } catch (err) {
      throw new UsageError(`Invalid --faults: ${(err as Error).message}`, {
        hint: 'Syntax: kind[=value][:probability][@[METHOD:]path], comma-separated',
      });
    }
  }
  return {
    host: readStringOption(args, 'host') ?? '127.0.0.1',
    port: readNumberOption(args, 'port', { min: 0, integer: true, max: 65535 }) ?? 0,
    token: readStringOption(args, 'token'),
    userToken: readStringOption(args, 'user-token'),
    sessionTtlMs: readNumberOption(args, 'session-ttl', { min: 1, integer: true }),
    data: dataPath,
    statePath: readPathOption(args, 'state', cwd),
    latencyMs: readNumberOption(args, 'latency', LATENCY_RANGE),
    latencyJitterMs: readNumberOption(args, 'jitter', LATENCY_RANGE),
    rateLimit: readNumberOption(args, 'rate-limit', { min: 0.001, integer: false }),
    faults,
    seed: readNumberOption(args, 'seed', { min: 0, integer: true }),
    maxPageSize: readNumberOption(args, 'max-page-size', { min: 1, integer: true }),
    htmlContentType: args.htmlContentType === true,
    exportClearSecrets: args.exportClearSecrets === true,
    generate: readNumberOption(args, 'generate', { min: 0, integer: true }),
    generateCases: readNumberOption(args, 'generate-cases', { min: 0, integer: true }),
    testFailures: parseListOption(args.testFail, '--test-fail'),
    testAnswerShape: readStringOption(args, 'test-answer') === 'success' ? 'success' : 'operationStatus',
    referencesApi: args.referencesApi !== false,
    ...(refusal === undefined ? {} : { authRefusal: refusal === '200' ? 200 : 401 }),
    paging: readStringOption(args, 'paging') as EmulatorOptions['paging'],
    caseIds: readStringOption(args, 'case-ids') as EmulatorOptions['caseIds'],
    profileSources: readStringOption(args, 'profile-sources') as EmulatorOptions['profileSources'],
  };
}

export const emulatorCommand: CommandSpec = {
  builder: (yargs) =>
    yargs.options({
      port: { type: 'number', describe: 'Port to listen on (0: any free port)', default: 0 },
      host: { type: 'string', describe: 'Interface to listen on', default: '127.0.0.1' },
      data: stringOption(
        'Seed file {connections, scanProfiles, cases, ...}, or a shipped environment: prod, dr-partial, empty',
      ),
      generate: numberOption('Add N generated valid connections (gen-<type>-<dept>-<i>) to the data'),
      'generate-cases': numberOption('Add N generated security cases (ids ca5e...) to the data'),
      state: stringOption('Persist changes to this file and reload it on start'),
      token: stringOption('API token to accept (default emulator-token)'),
      'user-token': stringOption('User token for refresh-access-token (default emulator-user-token)'),
      'session-ttl': numberOption('Lifetime of session tokens, ms (default 3600000)'),
      latency: numberOption(
        "Time from a request's arrival to its answer, ms (the emulator's own work inside it)",
      ),
      jitter: numberOption('Latency jitter, ms (default 10% of --latency)'),
      'rate-limit': numberOption('Requests per second before 429 + Retry-After'),
      faults: stringOption(
        'Fault rules, e.g. commit-then-drop:0.05@POST:/ds_connections,500:0.02,reset:0.01@GET:*',
      ),
      seed: numberOption('PRNG seed for faults and jitter'),
      'max-page-size': numberOption('Largest page limit honoured (default 1000)'),
      'html-content-type': booleanOption('Label JSON answers text/html, as some deployments do'),
      'export-clear-secrets': booleanOption('Export secrets in the clear instead of ******'),
      'test-fail': stringOption('Connections (names, comma-separated) whose ds-connection-test fails'),
      'test-answer': stringOption(
        'Connection test answer: {operationStatus:"SUCCESS"|"FAILED"} or {success:true|false}',
        { choices: ['operation-status', 'success'] },
      ),
      'auth-refusal': stringOption(
        'Answer a refused token with 401, or with 200 {"success":false} as a real deployment did',
        { choices: ['401', '200'] },
      ),
      paging: stringOption(
        'Query parameter lists honour for the page start (none: every page is the first)',
        { choices: ['skip', 'offset', 'none'] },
      ),
      'case-ids': stringOption(
        'Case ids: id = caseId, or a Mongo _id (taken by writes) beside a friendly caseId SPC-n',
        { choices: ['same', 'mongo'] },
      ),
      'profile-sources': stringOption("Scan profiles' dataSourceList as stored, or as connection names", {
        choices: ['as-stored', 'names'],
      }),
      'references-api': booleanOption(
        'Serve scanner-status and credentials (--no-references-api: both answer 404)',
        { default: true },
      ),
    }),
  examples: [
    {
      command: '$0 emulator --data prod',
      describe: 'A production-like environment (shipped) on a free port; --port 8484 to choose',
    },
    {
      command: '$0 emulator --data empty --generate 1000',
      describe: 'An empty environment plus 1000 generated connections',
    },
    {
      command:
        '$0 emulator --data dr-partial --state dr.state.json --faults commit-then-drop:0.1@POST:/ds_connections --seed 7',
      describe: 'A flaky DR target that remembers what was imported',
    },
  ],
  async run(args, ctx) {
    const options = buildEmulatorOptions(args, ctx.io.cwd);
    if (options.host !== undefined && !LOOPBACK.has(options.host)) {
      ctx.out.warn(
        `Listening on ${options.host}: the emulator holds clear secrets and is not meant to leave this machine`,
      );
    }
    const emulator = await startEmulator(options).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') {
        throw new UsageError(`Port ${options.port} on ${options.host} is already in use`, {
          hint: 'Pick another --port, or 0',
        });
      }
      const file = typeof options.data === 'string' ? options.data : options.statePath;
      // Anything but a bad seed or state file is not the user's to fix: a bug.
      if (file === undefined) throw err;
      const message = err.message.startsWith(`${file}: `) ? err.message.slice(file.length + 2) : err.message;
      throw new InputFileError(file, undefined, message, { cause: err });
    });
    if (ctx.globals.json) {
      ctx.out.json({
        url: emulator.url,
        apiUrl: `${emulator.url}/api/v1`,
        token: emulator.token,
        userToken: emulator.userToken,
      });
    } else {
      ctx.out.result(`Emulator listening on ${emulator.url}`);
      ctx.out.result(`API token: ${emulator.token}`);
      ctx.out.result(`User token: ${emulator.userToken}`);
    }
    ctx.out.info(
      `Serving ${countOf(emulator.store.connections.length, 'connection')}, ${countOf(emulator.store.profiles.length, 'scan profile')}, ` +
        `${countOf(emulator.store.cases.length, 'case')}; Ctrl-C to stop`,
    );
    await new Promise<void>((done) => {
      if (ctx.signal.aborted) done();
      else ctx.signal.addEventListener('abort', () => done(), { once: true });
    });
    await emulator.close();
    ctx.out.info(`Emulator stopped after ${emulator.record.requestCount} requests`);
    // Stopping is how a server ends: not an interrupted run.
    return ExitCode.ok;
  },
};
