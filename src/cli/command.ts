/**
 * How a command module looks. Each command lives in its own file (`export.ts`, `cases-update.ts`) and
 * exports one {@link CommandSpec}; `commands.ts` lists them by name ({@link CommandRef}) and a run
 * imports only the modules of the commands its command line names. A command never calls `process.exit`:
 * `run` returns the exit code, or throws a typed error that `run-cli.ts` turns into one line and a code.
 */
import type { Argv } from 'yargs';
import type { ExitCode } from '../errors.js';
import type { CliContext } from './context.js';

/** Arguments after yargs parsing: the command's own options plus positionals. */
export type ParsedArgs = Record<string, unknown> & { readonly _: readonly (string | number)[] };

/**
 * One `--help` example: a command line that runs as printed against the environments of README "Try
 * the examples" (`$0` stands for the tool's name), and what it does. `run-cli.ts` prints examples
 * itself, one line each and never wrapped, so they can be copied; a test runs every one of them.
 */
export interface HelpExample {
  readonly command: string;
  readonly describe: string;
}

/** One command of the CLI, as its module exports it (its name and description are its {@link CommandRef}'s). */
export interface CommandSpec {
  /** Declares the options (examples go in {@link CommandSpec.examples}, not `.example()`). */
  builder(yargs: Argv): Argv;
  /** At least one; shown under "Examples:" in `--help`. */
  readonly examples: readonly HelpExample[];
  /** Runs the command; options are already parsed and checked by `builder`. */
  run(args: ParsedArgs, ctx: CliContext): Promise<ExitCode>;
}

/**
 * A command as the registry knows it before its module is imported: what `--help` shows of it, and how
 * to import the rest, so a command that does not run costs nothing but these two strings.
 */
export interface CommandRef {
  /** yargs command string, e.g. `'list'` under the `connections` group, or `'import <snapshot>'`. */
  readonly command: string;
  readonly describe: string;
  /** Imports the command's module (and with it whatever the command needs) and returns its spec. */
  load(): Promise<CommandSpec>;
}

/** A group of subcommands (`connections`, `profiles`, `cases`). */
export interface CommandGroup {
  readonly command: string;
  readonly describe: string;
  readonly subcommands: readonly CommandRef[];
  /** At least one; shown under "Examples:" in the group's `--help`. */
  readonly examples: readonly HelpExample[];
}

/** A top-level entry of the CLI. */
export type CommandEntry = CommandRef | CommandGroup;

/** Type guard separating groups from commands. */
export function isCommandGroup(entry: CommandEntry): entry is CommandGroup {
  return 'subcommands' in entry;
}
