/**
 * The CLI as a function: `runCli(argv, io) -> exit code`. `main.ts` calls it with the real process;
 * tests call it in-process with captured streams. Every error ends here: a {@link DdsError} becomes one
 * line and its exit code; anything else is a bug (exit 70, with the stack).
 */
import yargs, { type Argv } from 'yargs';
import { DdsError, ExitCode, UsageError } from '../errors.js';
import { createLogger, LOG_LEVELS, type Logger, type LogLevel } from '../log.js';
import { scrub } from '../secrets.js';
import { TOOL_NAME, TOOL_VERSION } from '../version.js';
import { type CommandEntry, type CommandSpec, isCommandGroup, type ParsedArgs } from './command.js';
import { commandEntries } from './commands.js';
import { type CliContext, type CliIo, createOutput, type GlobalOptions } from './context.js';

interface RunState {
  code: ExitCode | undefined;
  error: unknown;
  logger: Logger | undefined;
  ran: boolean;
}

function readGlobals(args: ParsedArgs, io: CliIo): GlobalOptions {
  const envLevel = io.env.DDS_MIGRATE_LOG_LEVEL;
  const level = (args.logLevel as LogLevel | undefined) ?? (envLevel as LogLevel | undefined) ?? 'warn';
  return {
    config: (args.config as string | undefined) ?? io.env.DDS_MIGRATE_CONFIG,
    logLevel: LOG_LEVELS.includes(level) ? level : 'warn',
    logFile: args.logFile as string | undefined,
    json: args.json === true,
    quiet: args.quiet === true,
    progress: args.progress !== false,
  };
}

function attach(y: Argv, spec: CommandSpec, io: CliIo, state: RunState, signal: AbortSignal): Argv {
  return y.command(
    spec.command,
    spec.describe,
    (sub) => spec.builder(sub),
    async (args) => {
      state.ran = true;
      const parsed = args as unknown as ParsedArgs;
      const globals = readGlobals(parsed, io);
      const log = createLogger({ level: globals.logLevel, file: globals.logFile, stderr: io.stderr });
      state.logger = log;
      const ctx: CliContext = { io, globals, log, out: createOutput(io, globals), signal };
      try {
        state.code = await spec.run(parsed, ctx);
      } catch (error) {
        state.error = error;
      }
    },
  );
}

function register(y: Argv, entry: CommandEntry, io: CliIo, state: RunState, signal: AbortSignal): Argv {
  if (!isCommandGroup(entry)) return attach(y, entry, io, state, signal);
  return y.command(entry.command, entry.describe, (group) => {
    let g = group;
    for (const sub of entry.subcommands) g = attach(g, sub, io, state, signal);
    return g.demandCommand(1, `Choose a subcommand of '${entry.command}' (see --help)`);
  });
}

/** Print the one line a user sees for an error, and return its exit code. */
function reportError(error: unknown, io: CliIo, debug: boolean): ExitCode {
  if (error instanceof DdsError) {
    io.stderr.write(`error: ${scrub(error.toUserLine())}\n`);
    if (debug && error.stack) io.stderr.write(`${scrub(error.stack)}\n`);
    return error.exitCode;
  }
  const stack = error instanceof Error ? (error.stack ?? error.message) : String(error);
  io.stderr.write(
    `error: this is a bug in ${TOOL_NAME} ${TOOL_VERSION}; please report it with the lines below.\n${scrub(stack)}\n`,
  );
  return ExitCode.bug;
}

/** A stack trace is shown only at `--log-level debug` (or trace). */
function wantsStack(argv: readonly string[], io: CliIo): boolean {
  const verbose = (level: string | undefined) => level === 'debug' || level === 'trace';
  const i = argv.indexOf('--log-level');
  if (i >= 0 && verbose(argv[i + 1])) return true;
  if (argv.some((a) => a === '--log-level=debug' || a === '--log-level=trace')) return true;
  return verbose(io.env.DDS_MIGRATE_LOG_LEVEL);
}

/** Run the CLI with `argv` (without `node` and the script) against `io`; resolves to the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const state: RunState = { code: undefined, error: undefined, logger: undefined, ran: false };
  const signal = io.signal ?? new AbortController().signal;
  let parser: Argv = yargs([...argv])
    .scriptName(TOOL_NAME)
    .version(TOOL_VERSION)
    .usage('$0 <command> [options]\n\nClone, restore and compare Data Discovery Service environments.')
    .option('config', {
      type: 'string',
      describe: 'Config file (default ./dds-migrate.config.json or $DDS_MIGRATE_CONFIG)',
      global: true,
    })
    .option('log-level', {
      type: 'string',
      choices: LOG_LEVELS,
      describe: 'Log level on stderr (default warn)',
      global: true,
    })
    .option('log-file', {
      type: 'string',
      describe: 'Also write pino JSON lines to this file (0600)',
      global: true,
    })
    .option('json', { type: 'boolean', describe: 'One machine-readable result on stdout', global: true })
    .option('quiet', { type: 'boolean', describe: 'No informational lines on stderr', global: true })
    .option('progress', {
      type: 'boolean',
      default: true,
      describe: 'Progress bars on a TTY (--no-progress to hide)',
      global: true,
    })
    .strict()
    .demandCommand(1, 'Choose a command (see --help)')
    .recommendCommands()
    .exitProcess(false)
    .wrap(Math.min(110, io.stdout.columns ?? 100))
    .help()
    .alias('h', 'help')
    .fail((message, error) => {
      // Parse errors (unknown flag, missing argument) are usage errors; anything else is re-thrown.
      if (error) throw error;
      throw new UsageError(message ?? 'Invalid command line', { hint: 'See --help' });
    });
  for (const entry of commandEntries) parser = register(parser, entry, io, state, signal);

  let output = '';
  try {
    await parser.parseAsync([...argv], {}, (_err, _args, text) => {
      output = text ?? '';
    });
  } catch (error) {
    state.error = error;
  }
  if (output && state.error === undefined) io.stdout.write(`${output}\n`);

  let code: ExitCode;
  if (state.error !== undefined) {
    code = reportError(state.error, io, wantsStack(argv, io));
    if (state.error instanceof UsageError && !state.ran && output)
      io.stderr.write(`${output.split('\n')[0]}\n`);
  } else {
    code = state.code ?? ExitCode.ok;
  }
  await state.logger?.close();
  return code;
}
