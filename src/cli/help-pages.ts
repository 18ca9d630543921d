/** Help pages: examples one copyable line each, and the pages the build lays out (printed without yargs). */
import { createRequire } from 'node:module';
import type { Argv } from 'yargs';
import { TOOL_NAME } from '../version.js';
import {
  type CommandEntry,
  type CommandRef,
  type CommandSpec,
  type HelpExample,
  isCommandGroup,
} from './command.js';
import { topLevelExamples } from './commands.js';

/** The options every command takes, listed only on the top-level `--help`. */
export const GLOBAL_OPTIONS = ['config', 'log-level', 'log-file', 'json', 'quiet', 'progress'] as const;

/** yargs wraps `.example()` in two columns, breaking long command lines: epilogs hold this marker instead. */
export const EXAMPLES_MARKER = '@@examples@@';

/** The key of a page's examples: '' (top level), 'cases', 'cases update'. */
export function pageKey(group: string | undefined, command: string): string {
  const name = command.split(' ')[0] ?? command;
  return group === undefined ? name : `${group} ${name}`;
}

type ExamplesByPage = ReadonlyMap<string, readonly HelpExample[]>;

/** Every page's examples, by {@link pageKey} (a command's only when `loaded` holds its module). */
export function collectExamples(
  entries: readonly CommandEntry[],
  loaded: ReadonlyMap<CommandRef, CommandSpec>,
): ExamplesByPage {
  const pages = new Map<string, readonly HelpExample[]>([['', topLevelExamples]]);
  const addCommand = (ref: CommandRef, group?: string) => {
    const spec = loaded.get(ref);
    if (spec !== undefined) pages.set(pageKey(group, ref.command), spec.examples);
  };
  for (const entry of entries) {
    if (isCommandGroup(entry)) {
      pages.set(pageKey(undefined, entry.command), entry.examples);
      for (const sub of entry.subcommands) addCommand(sub, entry.command);
    } else addCommand(entry);
  }
  return pages;
}

/** A command or group page's epilog: its examples marker. */
export function finishPage(y: Argv, key: string): Argv {
  return y.hide('version').epilog(`${EXAMPLES_MARKER}${key}`);
}

/** The help text with its marker replaced by the examples; below the top level, global options in a line. */
export function expandExamples(help: string, examplesByPage: ExamplesByPage): string {
  const marker = new RegExp(`^${EXAMPLES_MARKER}(.*)$`, 'm');
  const page = marker.exec(help)?.[1];
  const text = page ? help.replace(/^Global options:\n(?:.*\S.*\n)+\n/m, '') : help;
  return text.replace(marker, (_all, key: string) => {
    const examples = examplesByPage.get(key) ?? [];
    const lines = ['Examples:'];
    for (const example of examples)
      lines.push(`  ${example.command.replaceAll('$0', TOOL_NAME)}`, `      ${example.describe}`);
    if (key !== '')
      lines.push(
        '',
        `Global options (${GLOBAL_OPTIONS.map((o) => `--${o}`).join(', ')}): see '${TOOL_NAME} --help'`,
      );
    return lines.join('\n');
  });
}

/** The width yargs lays the help out at: the terminal's, at most 110 columns; 100 when not a terminal. */
export function helpWidth(columns: number | undefined): number {
  return Math.min(110, columns ?? 100);
}

export const LAID_OUT_WIDTHS = [80, 100, 110] as const;

/** What `scripts/build-help-pages.mjs` writes beside this module's compiled file (absent in the sources). */
const LAID_OUT_NAME = './help-pages.json';
export const LAID_OUT_FILE = new URL(LAID_OUT_NAME, import.meta.url);

/** The laid-out pages: `help[width][request]` (request: `cases update --help`), `completion[shell]`. */
export interface LaidOutPages {
  readonly help: Readonly<Record<string, Readonly<Record<string, string>>>>;
  readonly completion: Readonly<Record<string, string>>;
}

/** The help requests laid out ahead: the top level, each command and group, each subcommand. */
export function laidOutRequests(entries: readonly CommandEntry[]): string[][] {
  const requests = [['--help']];
  for (const entry of entries) {
    const name = pageKey(undefined, entry.command);
    requests.push([name, '--help']);
    if (isCommandGroup(entry))
      for (const sub of entry.subcommands) requests.push([name, pageKey(undefined, sub.command), '--help']);
  }
  return requests;
}

/** The shells whose completion scripts the build lays out (yargs' bash, zsh and fish scripts). */
export const COMPLETION_SHELLS: readonly string[] = ['bash', 'zsh', 'fish'];

/** The shell whose completion script yargs prints (yargs' rule). */
export function completionShell(env: Readonly<Record<string, string | undefined>>): string {
  if (env.SHELL?.includes('zsh') || env.ZSH_NAME?.includes('zsh')) return 'zsh';
  return env.SHELL?.includes('fish') ? 'fish' : 'bash';
}

/** What `argv` prints when it is a request laid out ahead (cheaper than loading yargs); else undefined. */
export function laidOutPage(
  argv: readonly string[],
  columns: number | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const words = argv.slice(0, -1);
  const last = argv.at(-1);
  const help = (last === '--help' || last === '-h') && words.every((word) => /^[a-z][a-z-]*$/.test(word));
  // `completion`, or `completion SHELL` naming the shell instead of reading $SHELL.
  const completion = argv[0] === 'completion' && argv.length <= 2;
  if (!help && !completion) return undefined;
  let pages: LaidOutPages;
  try {
    pages = createRequire(import.meta.url)(LAID_OUT_NAME) as LaidOutPages;
  } catch {
    return undefined;
  }
  if (!help) {
    const shell = argv[1] ?? completionShell(env);
    return COMPLETION_SHELLS.includes(shell) ? pages.completion[shell] : undefined;
  }
  return pages.help[helpWidth(columns)]?.[[...words, '--help'].join(' ')];
}
