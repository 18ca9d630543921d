/**
 * The command registry (src/cli/commands.ts) lists each command by its `command` and `describe` and
 * imports its module on dispatch: every module loads, with examples for its page.
 */
import { describe, expect, it } from 'vitest';
import { type CommandRef, isCommandGroup } from '../../src/cli/command.js';
import { commandEntries } from '../../src/cli/commands.js';

const refs: { readonly path: string; readonly ref: CommandRef }[] = commandEntries.flatMap((entry) =>
  isCommandGroup(entry)
    ? entry.subcommands.map((ref) => ({ path: `${entry.command} ${ref.command}`, ref }))
    : [{ path: entry.command, ref: entry }],
);

describe('command registry', () => {
  for (const { path, ref } of refs) {
    it(`${path}: its module loads, with examples`, async () => {
      const spec = await ref.load();
      expect(spec.examples.length).toBeGreaterThan(0);
    });
  }

  it('names each command once per level', () => {
    const names = (list: readonly { command: string }[]) => list.map((c) => c.command.split(' ')[0]);
    const top = names(commandEntries);
    expect(new Set(top).size).toBe(top.length);
    for (const entry of commandEntries) {
      if (!isCommandGroup(entry)) continue;
      const subs = names(entry.subcommands);
      expect(new Set(subs).size).toBe(subs.length);
    }
  });
});
