import type { CommandSpec } from './command.js';
import { createPendingCommand } from './not-implemented.js';

/** `get <id>`: placeholder until its issue lands. */
export const profilesGetCommand: CommandSpec = createPendingCommand('get <id>', "Print one scan profile");
