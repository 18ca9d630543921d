/**
 * The help pages' examples and global options: yargs wraps `.example()` in two columns and repeats the
 * global options on every page, so the pages carry a marker that {@link expandExamples} fills with the
 * examples of `commands.ts`, one copyable line each.
 */
import type { Argv } from 'yargs';
import { TOOL_NAME } from '../version.js';
import { type CommandEntry, type HelpExample, isCommandGroup } from './command.js';
import { commandEntries, topLevelExamples } from './commands.js';

/** The options every command takes, shown once, under "Global options:" of the top-level `--help`. */
export const GLOBAL_OPTIONS = ['config', 'log-level', 'log-file', 'json', 'quiet', 'progress'] as const;

/**
 * yargs wraps `.example()` at the `.wrap()` width, in two columns: a long command line comes out in
 * pieces that cannot be copied. So a page's epilog holds only this short marker (never wrapped), and
 * {@link expandExamples} replaces it with the page's examples, one line each.
 */
export const EXAMPLES_MARKER = '@@examples@@';

/** The key of a page's examples: '' (top level), 'cases', 'cases update'. */
export function pageKey(group: string | undefined, command: string): string {
  const name = command.split(' ')[0] ?? command;
  return group === undefined ? name : `${group} ${name}`;
}

/** Every page's examples, by {@link pageKey}. */
function collectExamples(entries: readonly CommandEntry[]): Map<string, readonly HelpExample[]> {
  const pages = new Map<string, readonly HelpExample[]>([['', topLevelExamples]]);
  for (const entry of entries) {
    pages.set(pageKey(undefined, entry.command), entry.examples);
    if (isCommandGroup(entry))
      for (const sub of entry.subcommands) pages.set(pageKey(entry.command, sub.command), sub.examples);
  }
  return pages;
}

const examplesByPage = collectExamples(commandEntries);

/** A command or group page: its examples, as a marker (see {@link EXAMPLES_MARKER}). */
export function finishPage(y: Argv, key: string): Argv {
  return y.hide('version').epilog(`${EXAMPLES_MARKER}${key}`);
}

/**
 * The help text with its examples marker replaced by the examples: each command line whole on its
 * own line (copyable), its description indented below. On a command or group page, the "Global
 * options:" section (yargs repeats it on every page) becomes one line pointing at the top-level page;
 * the options stay declared there, so they are still parsed and completed.
 */
export function expandExamples(help: string): string {
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
