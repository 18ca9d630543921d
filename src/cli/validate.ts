import type { CommandSpec } from './command.js';
import { createPendingCommand } from './not-implemented.js';

/** `validate <snapshot>`: placeholder until its issue lands. */
export const validateCommand: CommandSpec = createPendingCommand('validate <snapshot>', "Check a snapshot against the data source templates");
