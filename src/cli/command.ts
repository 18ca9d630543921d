/** How a command module looks: each command file exports one {@link CommandSpec}. */
import type { Argv } from 'yargs';
import type { ExitCode } from '../errors.js';
import type { CliContext } from './context.js';

/** Arguments after yargs parsing: the command's own options plus positionals. */
export type ParsedArgs = Record<string, unknown> & { readonly _: readonly (string | number)[] };

/** One `--help` example: it runs as printed against README's "Try the examples"; a test runs each. */
export interface HelpExample {
  readonly command: string;
  readonly describe: string;
}

/** One command, as its module exports it (its name and description are its {@link CommandRef}'s). */
export interface CommandSpec {
  /** Declares the options (examples go in `examples`, not `.example()`: see help-pages.ts). */
  builder(yargs: Argv): Argv;
  readonly examples: readonly HelpExample[];
  /** Returns the exit code, or throws a typed error; never calls `process.exit`. */
  run(args: ParsedArgs, ctx: CliContext): Promise<ExitCode>;
}

/** A command before its module is imported: what `--help` shows of it, and how to import the rest. */
export interface CommandRef {
  /** yargs command string, e.g. `'import <snapshot>'`. */
  readonly command: string;
  readonly describe: string;
  load(): Promise<CommandSpec>;
}

/** A group of subcommands (`connections`, `profiles`, `cases`). */
interface CommandGroup {
  readonly command: string;
  readonly describe: string;
  readonly subcommands: readonly CommandRef[];
  readonly examples: readonly HelpExample[];
}

/** A top-level entry of the CLI. */
export type CommandEntry = CommandRef | CommandGroup;

export function isCommandGroup(entry: CommandEntry): entry is CommandGroup {
  return 'subcommands' in entry;
}
