/**
 * How a command module looks. Each command lives in its own file (`export.ts`, `cases-update.ts`) and
 * exports one {@link CommandSpec}; `commands.ts` lists them. A command never calls `process.exit`:
 * `run` returns the exit code, or throws a typed error that `run-cli.ts` turns into one line and a code.
 */
import type { Argv } from 'yargs';
import type { ExitCode } from '../errors.js';
import type { CliContext } from './context.js';

/** Arguments after yargs parsing: the command's own options plus positionals. */
export type ParsedArgs = Record<string, unknown> & { readonly _: readonly (string | number)[] };

/** One command of the CLI. */
export interface CommandSpec {
  /** yargs command string, e.g. `'list'` under the `connections` group, or `'import <snapshot>'`. */
  readonly command: string;
  readonly describe: string;
  /** Declares options and at least one `.example(...)`. */
  builder(yargs: Argv): Argv;
  /** Runs the command; options are already parsed and checked by `builder`. */
  run(args: ParsedArgs, ctx: CliContext): Promise<ExitCode>;
}

/** A group of subcommands (`connections`, `profiles`, `cases`). */
export interface CommandGroup {
  readonly command: string;
  readonly describe: string;
  readonly subcommands: readonly CommandSpec[];
}

/** A top-level entry of the CLI. */
export type CommandEntry = CommandSpec | CommandGroup;

/** Type guard separating groups from commands. */
export function isCommandGroup(entry: CommandEntry): entry is CommandGroup {
  return 'subcommands' in entry;
}
