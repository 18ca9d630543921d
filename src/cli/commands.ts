/**
 * The list of commands. Adding a command: write `src/cli/<name>.ts` exporting a CommandSpec and add it here.
 */
import { casesListCommand } from './cases-list.js';
import { casesResolveCommand } from './cases-resolve.js';
import { casesUpdateCommand } from './cases-update.js';
import type { CommandEntry } from './command.js';
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
import { undoCommand } from './undo.js';
import { validateCommand } from './validate.js';
import { verifyCommand } from './verify.js';

/** Every top-level command and group, in the order `--help` shows them. */
export const commandEntries: readonly CommandEntry[] = [
  { command: 'connections', describe: 'Data source connections', subcommands: [connectionsListCommand] },
  exportCommand,
  validateCommand,
  diffCommand,
  importCommand,
  undoCommand,
  verifyCommand,
  { command: 'overrides', describe: 'Overrides files for import', subcommands: [overridesInitCommand] },
  {
    command: 'profiles',
    describe: 'Scan profiles',
    subcommands: [profilesListCommand, profilesGetCommand, profilesCreateCommand, profilesCloneCommand],
  },
  {
    command: 'cases',
    describe: 'Security cases',
    subcommands: [casesListCommand, casesResolveCommand, casesUpdateCommand],
  },
  emulatorCommand,
];
