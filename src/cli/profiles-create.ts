import type { CommandSpec } from './command.js';
import { createPendingCommand } from './not-implemented.js';

/** `create`: placeholder until its issue lands. */
export const profilesCreateCommand: CommandSpec = createPendingCommand('create', "Create a scan profile from a file");
