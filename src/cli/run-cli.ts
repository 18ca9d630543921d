/**
 * The CLI as a function: `runCli(argv, io) -> exit code`, called by `main.ts` and in-process by tests. Every
 * error ends here: a {@link DdsError} is one line and its exit code; else a bug (exit 70, with the stack).
 */
import type { Argv } from 'yargs';
import { ExitCode, UsageError } from '../errors.js';
import type { Logger } from '../log.js';
import { LOG_LEVELS, type LogLevel } from '../log-levels.js';
import { TOOL_NAME, TOOL_VERSION } from '../version.js';
import {
  type CommandEntry,
  type CommandRef,
  type CommandSpec,
  isCommandGroup,
  type ParsedArgs,
} from './command.js';
import { commandEntries, loadNamedCommands } from './commands.js';
import { type CliContext, type CliIo, createOutput, type GlobalOptions } from './context.js';
import {
  collectExamples,
  EXAMPLES_MARKER,
  expandExamples,
  finishPage,
  GLOBAL_OPTIONS,
  helpWidth,
  laidOutPage,
  pageKey,
} from './help-pages.js';
import { booleanOption, readPathOption, readStringOption } from './options.js';
import { describeParseFailure, NO_COMMAND_MESSAGE, NO_SUBCOMMAND_PREFIX } from './parse-errors.js';
import { reportError, wantsStack } from './report-error.js';

/** One run of yargs: what its command handlers need, and what they leave behind. */
interface RunState {
  /** The modules of the commands the command line names. */
  readonly loaded: ReadonlyMap<CommandRef, CommandSpec>;
  readonly io: CliIo;
  readonly signal: AbortSignal;
  code?: ExitCode;
  error?: unknown;
  logger?: Logger;
  /** Usage and commands of the level where no command was chosen, printed before the error line. */
  shortHelp?: string;
}

function readGlobals(args: ParsedArgs, io: CliIo): GlobalOptions {
  const envLevel = io.env.DDS_MIGRATE_LOG_LEVEL;
  // --quiet shows errors only: its default log level is error (an explicit --log-level still wins).
  const level =
    (readStringOption(args, 'log-level', `one of ${LOG_LEVELS.join(', ')}`) as LogLevel | undefined) ??
    (envLevel as LogLevel | undefined) ??
    (args.quiet === true ? 'error' : 'warn');
  return {
    // `$DDS_MIGRATE_CONFIG` is loadConfig's fallback, not repeated here.
    config: readStringOption(args, 'config'),
    logLevel: LOG_LEVELS.includes(level) ? level : 'warn',
    // Relative to the run's working directory, like every other path option.
    logFile: readPathOption(args, 'log-file', io.cwd),
    json: args.json === true,
    quiet: args.quiet === true,
    verbose: args.verbose === true,
    progress: args.progress !== false,
  };
}

function attach(y: Argv, ref: CommandRef, state: RunState, group?: string): Argv {
  const { io, signal } = state;
  const spec = state.loaded.get(ref);
  if (spec === undefined) {
    // Listed in the help only: yargs runs a command only when named, and loadNamedCommands loads that one.
    return y.command(ref.command, ref.describe, {}, () => {
      throw new Error(`the module of the command '${ref.command}' was not loaded`);
    });
  }
  return y.command(
    ref.command,
    ref.describe,
    (sub) => finishPage(spec.builder(sub), pageKey(group, ref.command)),
    async (args) => {
      const parsed = args as unknown as ParsedArgs;
      const globals = readGlobals(parsed, io);
      try {
        // Inside the try: a bad --log-file is a usage error like any other.
        const { createLogger } = await import('../log.js');
        const log = createLogger({ level: globals.logLevel, file: globals.logFile, stderr: io.stderr });
        state.logger = log;
        const ctx: CliContext = { io, globals, log, out: createOutput(io, globals), signal };
        state.code = await spec.run(parsed, ctx);
      } catch (error) {
        state.error = error;
      }
    },
  );
}

function register(y: Argv, entry: CommandEntry, state: RunState): Argv {
  if (!isCommandGroup(entry)) return attach(y, entry, state);
  return y.command(entry.command, entry.describe, (group) => {
    let g = group;
    for (const sub of entry.subcommands) g = attach(g, sub, state, entry.command);
    return finishPage(g, pageKey(undefined, entry.command)).demandCommand(
      1,
      `${NO_SUBCOMMAND_PREFIX} '${entry.command}'`,
    );
  });
}

/** Usage, description and commands of a help text, without the options (they are one --help away). */
function shortenHelp(help: string): string {
  return help.split(/\n\s*\n(?=Global options:|Options:|Positionals:)/)[0]?.trimEnd() ?? help;
}

/**
 * yargs lays out a command's whole help text right after starting its handler, in case the command later fails
 * through yargs: ~30 ms of every start (cliui measuring each cell). This CLI never shows help once a handler
 * started (the `.fail` handler meets parse errors only, before). Off through yargs' internal methods (yargs 17,
 * 18; else nothing changes): test/unit/cli-help-cache.test.ts fails if the installed yargs lacks them.
 */
export function skipHelpCache(parser: Argv): boolean {
  const internals = (
    parser as unknown as {
      getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: unknown } } | undefined;
    }
  ).getInternalMethods?.();
  const usage = internals?.getUsageInstance?.();
  if (usage === undefined || typeof usage.cacheHelpMessage !== 'function') return false;
  usage.cacheHelpMessage = () => undefined;
  return true;
}

/** Run the CLI with `argv` (without `node` and the script) against `io`; resolves to the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  // `--version`, and the help pages and completion scripts the build laid out with yargs, are answered
  // without loading the parser (yargs and its help layout: most of such a start's time and memory).
  const page =
    argv.length === 1 && argv[0] === '--version'
      ? `${TOOL_VERSION}\n`
      : laidOutPage(argv, io.stdout.columns, io.env);
  if (page !== undefined) {
    io.stdout.write(page);
    return ExitCode.ok;
  }
  return runYargs(argv, io);
}

/** {@link runCli} with every command line laid out and parsed by yargs (the build lays out its pages with it). */
export async function runYargs(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  // Loaded side by side (one file read while another compiles); a failure is met where awaited, not unhandled.
  const yargsLoaded = import('yargs');
  yargsLoaded.catch(() => undefined);
  let loaded: ReadonlyMap<CommandRef, CommandSpec>;
  try {
    loaded = await loadNamedCommands(commandEntries, argv);
  } catch (error) {
    // A command's module that cannot be imported: a broken installation or a bug, reported as one.
    return reportError(error, io, wantsStack(argv, io));
  }
  const { default: yargs } = await yargsLoaded;
  const signal = io.signal ?? new AbortController().signal;
  const state: RunState = { loaded, io, signal };
  // Options declared at the top level are global (yargs' default): every command page parses them.
  let parser: Argv = yargs([...argv])
    .scriptName(TOOL_NAME)
    .version(TOOL_VERSION)
    .usage('$0 <command> [options]\n\nClone, restore and compare Data Discovery Service environments.')
    .option('config', {
      type: 'string',
      describe: 'Config file (default ./dds-migrate.config.json or $DDS_MIGRATE_CONFIG)',
    })
    .option('log-level', {
      type: 'string',
      choices: LOG_LEVELS,
      describe: 'Log level on stderr (default warn; error with --quiet)',
    })
    .option('log-file', {
      type: 'string',
      describe: 'Also write pino JSON lines to this file (0600)',
    })
    .option('json', booleanOption('One machine-readable result on stdout'))
    .option('quiet', booleanOption('Only errors on stderr (no information, no warnings, no progress bar)'))
    .option('verbose', booleanOption('Every warning on its own line (repeated ones are otherwise collapsed)'))
    .conflicts('quiet', 'verbose')
    .option('progress', {
      type: 'boolean',
      default: true,
      describe: 'Progress bars on a TTY (--no-progress to hide)',
    })
    .group([...GLOBAL_OPTIONS], 'Global options:')
    .epilog(EXAMPLES_MARKER)
    .strict()
    .demandCommand(1, NO_COMMAND_MESSAGE)
    .recommendCommands()
    .exitProcess(false)
    .wrap(helpWidth(io.stdout.columns))
    // Every text of the CLI is English: yargs' headings and messages too, whatever $LANG says.
    .locale('en')
    .help()
    .alias('h', 'help')
    .fail((message, error, context) => {
      // Parse errors (unknown flag, missing argument or value: yargs' own YError) are usage errors,
      // rewritten to name the flag; anything else (a command's error) is re-thrown as it is.
      if (error && error.name !== 'YError') throw error;
      let help = '';
      context.showHelp((text: string) => {
        help = text;
      });
      const failure = describeParseFailure(message ?? error?.message ?? 'Invalid command line', help, argv);
      if (failure.showCommands) state.shortHelp = shortenHelp(help);
      throw new UsageError(failure.message, {
        hint: failure.command ? `See '${failure.command} --help'` : 'See --help',
      });
    });
  for (const entry of commandEntries) parser = register(parser, entry, state);
  skipHelpCache(parser);
  // yargs' own completion, listed last: a bash, zsh or fish script (by $SHELL or the shell named after it:
  // help-pages.ts) asking the CLI for candidates, so commands, options and choices follow the code.
  parser = parser.completion(
    'completion',
    'Print a shell completion script (bash, zsh, fish; default by $SHELL): eval "$(dds-migrate completion)"',
  );

  let output = '';
  try {
    await parser.parseAsync([...argv], {}, (_err, _args, text) => {
      output = text ?? '';
    });
  } catch (error) {
    state.error = error;
  }
  if (output && state.error === undefined)
    io.stdout.write(`${expandExamples(output, collectExamples(commandEntries, loaded))}\n`);

  let code: ExitCode;
  if (state.error !== undefined) {
    if (state.shortHelp) io.stderr.write(`${state.shortHelp}\n\n`);
    code = reportError(state.error, io, wantsStack(argv, io));
  } else {
    code = state.code ?? ExitCode.ok;
  }
  try {
    await state.logger?.close();
  } catch (error) {
    // An unwritable log file (a full disk) is an error of its own only when the command succeeded.
    if (state.error === undefined) code = reportError(error, io, false);
  }
  return code;
}
