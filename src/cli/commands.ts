/**
 * The list of commands. Adding a command: write `src/cli/<name>.ts` exporting a CommandSpec and add it here.
 */
import { casesListCommand } from './cases-list.js';
import { casesResolveCommand } from './cases-resolve.js';
import { casesUpdateCommand } from './cases-update.js';
import type { CommandEntry, HelpExample } from './command.js';
import { connectionsListCommand } from './connections-list.js';
import { diffCommand } from './diff.js';
import { emulatorCommand } from './emulator.js';
import { exportCommand } from './export.js';
import { importCommand } from './import.js';
import { overridesInitCommand } from './overrides-init.js';
import { profilesCloneCommand } from './profiles-clone.js';
import { profilesCreateCommand } from './profiles-create.js';
import { profilesGetCommand } from './profiles-get.js';
import { profilesListCommand } from './profiles-list.js';
import { runsCommand } from './runs.js';
import { undoCommand } from './undo.js';
import { validateCommand } from './validate.js';
import { verifyCommand } from './verify.js';

/** Every top-level command and group, in the order `--help` shows them. */
export const commandEntries: readonly CommandEntry[] = [
  {
    command: 'connections',
    describe: 'Data source connections',
    subcommands: [connectionsListCommand],
    examples: [{ command: '$0 connections list --env dr --type s3', describe: 'The s3 connections of dr' }],
  },
  exportCommand,
  validateCommand,
  diffCommand,
  importCommand,
  undoCommand,
  runsCommand,
  verifyCommand,
  {
    command: 'overrides',
    describe: 'Overrides files for import',
    subcommands: [overridesInitCommand],
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
    subcommands: [profilesListCommand, profilesGetCommand, profilesCreateCommand, profilesCloneCommand],
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
    subcommands: [casesListCommand, casesResolveCommand, casesUpdateCommand],
    examples: [
      {
        command: "$0 cases list --env prod --status open --policy 'Credentials in Data'",
        describe: 'The open cases of one policy',
      },
    ],
  },
  emulatorCommand,
];

/**
 * The examples of the top-level `--help`: the three jobs, against the environments of README "Try the
 * examples" (a config naming `prod` and `dr`, two emulators serving the shipped environments).
 */
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
