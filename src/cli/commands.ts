/** The commands by name: a run imports a command's module only when its command line names it. */
import {
  type CommandEntry,
  type CommandRef,
  type CommandSpec,
  type HelpExample,
  isCommandGroup,
} from './command.js';

/** Every top-level command and group, in the order `--help` shows them. */
export const commandEntries: readonly CommandEntry[] = [
  {
    command: 'connections',
    describe: 'Data source connections',
    subcommands: [
      {
        command: 'list',
        describe: 'List every connection of an environment, all pages',
        load: async () => (await import('./connections-list.js')).connectionsListCommand,
      },
    ],
    examples: [{ command: '$0 connections list --env dr --type s3', describe: 'The s3 connections of dr' }],
  },
  {
    command: 'export',
    describe: "Write a snapshot of an environment's connections",
    load: async () => (await import('./export.js')).exportCommand,
  },
  {
    command: 'validate <snapshot>',
    describe: 'Check a snapshot and every entry against its data source template',
    load: async () => (await import('./validate.js')).validateCommand,
  },
  {
    command: 'diff',
    describe: 'Show what differs between two environments or snapshots',
    load: async () => (await import('./diff.js')).diffCommand,
  },
  {
    command: 'import <snapshot>',
    describe: 'Create the connections of a snapshot in an environment, resumably',
    load: async () => (await import('./import.js')).importCommand,
  },
  {
    command: 'undo <journal>',
    describe: 'Take back the newest run of an import journal not yet undone (again: the one before)',
    load: async () => (await import('./undo.js')).undoCommand,
  },
  {
    command: 'runs <journal>',
    describe: 'List the runs of an import journal: what each wrote, and which are undone',
    load: async () => (await import('./runs.js')).runsCommand,
  },
  {
    command: 'verify <snapshot>',
    describe: 'Check that an environment is a complete, working restore of a snapshot',
    load: async () => (await import('./verify.js')).verifyCommand,
  },
  {
    command: 'overrides',
    describe: 'Overrides files for import',
    subcommands: [
      {
        command: 'init <snapshot>',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: "${env:NAME}" is a literal overrides placeholder
        describe: 'Write an overrides file with a ${env:NAME} placeholder for every secret the import needs',
        load: async () => (await import('./overrides-init.js')).overridesInitCommand,
      },
    ],
    examples: [
      {
        command: '$0 overrides init prod.snapshot.jsonl -o prod.overrides.json',
        describe: 'An overrides file with a variable for each secret the import of the snapshot needs',
      },
    ],
  },
  {
    command: 'profiles',
    describe: 'Scan profiles',
    subcommands: [
      {
        command: 'list',
        describe: 'List every scan profile of an environment',
        load: async () => (await import('./profiles-list.js')).profilesListCommand,
      },
      {
        command: 'get <id>',
        describe: 'Print one scan profile as JSON',
        load: async () => (await import('./profiles-get.js')).profilesGetCommand,
      },
      {
        command: 'create',
        describe: 'Create a scan profile from a JSON file',
        load: async () => (await import('./profiles-create.js')).profilesCreateCommand,
      },
      {
        command: 'clone <ids..>',
        describe:
          'Copy scan profiles to another environment, remapping their data sources by connection name',
        load: async () => (await import('./profiles-clone.js')).profilesCloneCommand,
      },
    ],
    examples: [
      {
        command: '$0 profiles get 66b2a0d1c3e4f5a6b7c8d902 --env prod',
        describe: 'One scan profile of prod, as JSON',
      },
    ],
  },
  {
    command: 'cases',
    describe: 'Security cases',
    subcommands: [
      {
        command: 'list',
        describe: 'List security cases, all pages, streamed (table, json, ndjson or csv)',
        load: async () => (await import('./cases-list.js')).casesListCommand,
      },
      {
        command: 'resolve <ids..>',
        describe: 'Resolve cases one at a time, recording an audit reason',
        load: async () => (await import('./cases-resolve.js')).casesResolveCommand,
      },
      {
        command: 'update',
        describe: 'Update cases in bulk by filter (one PATCH cases:update), after showing how many match',
        load: async () => (await import('./cases-update.js')).casesUpdateCommand,
      },
    ],
    examples: [
      {
        command: "$0 cases list --env prod --status open --policy 'Credentials in Data'",
        describe: 'The open cases of one policy',
      },
    ],
  },
  {
    command: 'emulator',
    describe: 'Run a local Data Discovery Service (tests, demos, rehearsals)',
    load: async () => (await import('./emulator.js')).emulatorCommand,
  },
];

/** The examples of the top-level `--help`: the three jobs. */
export const topLevelExamples: readonly HelpExample[] = [
  { command: '$0 connections list --env prod', describe: 'Every connection of prod' },
  { command: '$0 export --from prod -o prod.snapshot.jsonl', describe: 'Clone: a snapshot of prod...' },
  {
    command: '$0 import prod.snapshot.jsonl --to dr --overrides dr-overrides.json',
    describe: '...created in dr (resumable; run it again: 0 creates)',
  },
  {
    command: '$0 diff --from prod.snapshot.jsonl --to dr',
    describe: 'Dry-run diff (exit 1 when something differs)',
  },
  { command: '$0 emulator --data prod', describe: 'A local service to try it all on' },
];

function nameOf(command: string): string {
  return command.split(' ')[0] ?? command;
}

/** Import the modules of the commands `argv` names (an option's value may cost a module more, never less). */
export async function loadNamedCommands(
  entries: readonly CommandEntry[],
  argv: readonly string[],
): Promise<Map<CommandRef, CommandSpec>> {
  const words = new Set(argv.filter((arg) => !arg.startsWith('-')));
  const named: CommandRef[] = [];
  for (const entry of entries) {
    if (!words.has(nameOf(entry.command))) continue;
    if (isCommandGroup(entry))
      named.push(...entry.subcommands.filter((sub) => words.has(nameOf(sub.command))));
    else named.push(entry);
  }
  const specs = await Promise.all(named.map((ref) => ref.load()));
  return new Map(named.map((ref, i) => [ref, specs[i] as CommandSpec]));
}
