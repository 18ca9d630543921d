/** yargs' parse errors rewritten into one line that names the flag, argument or command. Pure. */
import { findClosest } from '../closest.js';
import { COMPLETION_SHELLS } from './help-pages.js';

interface ParseFailure {
  readonly message: string;
  /** No command was chosen: print the short help (usage and commands) first. */
  readonly showCommands: boolean;
  /** The command whose help to read, e.g. `dds-migrate profiles get`. */
  readonly command: string;
}

/** The `demandCommand` messages run-cli sets: no command, or a group without a subcommand. */
export const NO_COMMAND_MESSAGE = 'Missing a command';
export const NO_SUBCOMMAND_PREFIX = 'Missing a subcommand of';

function flagOf(name: string): string {
  const n = name.trim();
  return n.length === 1 ? `-${n}` : `--${n}`;
}

function splitNames(list: string): string[] {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** The command path of a usage line: `dds-migrate <command> [options]` -> [dds-migrate]. */
function commandPath(usage: string): string[] {
  return usage.split(/\s+/).filter((w) => w !== '' && !/^[<[]/.test(w));
}

function commandNames(help: string, usage: string): string[] {
  const path = commandPath(usage);
  const section = help.split(/\nCommands:\n/)[1]?.split(/\n\s*\n/)[0] ?? '';
  // A command's line starts with the program's name; a description wrapped onto a line of its own does not.
  return section
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((words) => words[0] === path[0])
    .map((words) => words[path.length])
    .filter((name): name is string => name !== undefined && name !== '');
}

/** The word the user typed where a command was expected: the first bare word not part of the command path. */
function typedCommand(usage: string, argv: readonly string[]): string | undefined {
  const path = commandPath(usage).slice(1);
  const words = argv.filter((a) => !a.startsWith('-'));
  return words.find((w, i) => path[i] !== w);
}

function optionNames(help: string): string[] {
  return [...new Set([...help.matchAll(/(?:^|[\s,[])(--[a-zA-Z][\w-]*)/gm)].map((m) => m[1] as string))];
}

/** `Unknown option --overides: did you mean --overrides?` when one known option is close. */
function describeUnknownOptions(options: readonly string[], help: string): string {
  const flags = options.map(flagOf);
  const first = flags[0];
  const close =
    flags.length === 1 && first?.startsWith('--') ? findClosest(first, optionNames(help)) : undefined;
  const listed = `Unknown option${flags.length > 1 ? 's' : ''} ${flags.join(', ')}`;
  return close === undefined ? listed : `${listed}: did you mean ${close}?`;
}

/** Rewrite one yargs failure message, given the help text of the command being parsed. */
export function describeParseFailure(message: string, help: string, argv: readonly string[]): ParseFailure {
  const text = message.trim();
  const usage = (help.split('\n')[0] ?? '').trim();
  const command = commandPath(usage).join(' ');
  const one = (m: string): ParseFailure => ({ message: m, showCommands: false, command });

  if (text === NO_COMMAND_MESSAGE || text.startsWith(NO_SUBCOMMAND_PREFIX)) {
    return { message: text, showCommands: true, command };
  }

  const unknown = /^Unknown arguments?: (.+)$/s.exec(text);
  if (unknown?.[1]) {
    const names = splitNames(unknown[1]);
    const options = names.filter((n) => argv.some((a) => a === flagOf(n) || a.startsWith(`${flagOf(n)}=`)));
    const words = names.filter((n) => !options.includes(n));
    // The shells laid out are answered before yargs (help-pages.ts): another word after it is not one.
    if (words.length > 0 && argv[0] === 'completion' && !COMPLETION_SHELLS.includes(words[0] ?? '')) {
      const shells = COMPLETION_SHELLS.join(', ');
      return one(`No completion script for '${words[0]}': give one of ${shells}, or none (by $SHELL)`);
    }
    if (words.length > 0 && /\nCommands:\n/.test(help)) {
      const known = commandNames(help, usage);
      return one(
        `Unknown command '${words[0]}'${known.length > 0 ? `; expected one of ${known.join(', ')}` : ''}`,
      );
    }
    if (options.length > 0) {
      return one(describeUnknownOptions(options, help));
    }
    return one(`Unexpected argument${words.length > 1 ? 's' : ''} ${words.map((w) => `'${w}'`).join(', ')}`);
  }

  const suggestion = /^Did you mean (.+)\?$/.exec(text);
  if (suggestion?.[1]) {
    const typed = typedCommand(usage, argv);
    return one(`Unknown command${typed ? ` '${typed}'` : ''}: did you mean '${suggestion[1]}'?`);
  }

  const missing = /^Missing required arguments?: (.+)$/.exec(text);
  if (missing?.[1]) {
    // yargs names a missing option before an unknown one: `--fromm prod` is the typo of `--from`.
    const known = new Set(optionNames(help));
    const unknown = argv
      .filter((a) => /^--[a-zA-Z]/.test(a))
      .map((a) => a.split('=')[0] as string)
      .filter((flag) => !known.has(flag) && !known.has(flag.replace(/^--no-/, '--')));
    if (unknown.length > 0)
      return one(
        describeUnknownOptions(
          unknown.map((f) => f.slice(2)),
          help,
        ),
      );
    const flags = splitNames(missing[1]).map(flagOf);
    return one(`Missing required option${flags.length > 1 ? 's' : ''} ${flags.join(', ')}`);
  }

  const positionals = /^Not enough non-option arguments: got (\d+), need at least (\d+)$/.exec(text);
  if (positionals) {
    const got = Number(positionals[1]);
    const names = [...usage.matchAll(/<[^>]+>/g)].map((m) => m[0]).slice(got);
    const what = names.length > 0 ? names.join(' ') : 'an argument';
    return one(`Missing ${what}${usage ? ` (usage: ${usage} [options])` : ''}`);
  }

  const tooMany = /^Too many non-option arguments: got (\d+), maximum of (\d+)$/.exec(text);
  if (tooMany) {
    return one(
      `Too many arguments: got ${tooMany[1]}, expected at most ${tooMany[2]}${usage ? ` (usage: ${usage} [options])` : ''}`,
    );
  }

  const noValue = /^Not enough arguments following: (.+)$/.exec(text);
  if (noValue?.[1]) return one(`Expected a value after ${flagOf(noValue[1])}`);

  const choices = /^Invalid values?:\s*Argument: (\S+), Given: (.+), Choices: (.+)$/s.exec(text);
  if (choices?.[1] && choices[2] && choices[3]) {
    const allowed = choices[3]
      .split(',')
      .map((c) => c.trim().replace(/^"(.*)"$/, '$1'))
      .join(', ');
    return one(`Expected ${flagOf(choices[1])} to be one of ${allowed}, got ${choices[2].trim()}`);
  }

  const exclusive = /^Arguments (\S+) and (\S+) are mutually exclusive$/.exec(text);
  if (exclusive?.[1] && exclusive[2]) {
    return one(`${flagOf(exclusive[1])} and ${flagOf(exclusive[2])} cannot be used together`);
  }

  return one(text.replace(/\s*\n\s*/g, ' '));
}
