import type { CommandSpec } from './command.js';
import { createPendingCommand } from './not-implemented.js';

/** `clone <ids>`: placeholder until its issue lands. */
export const profilesCloneCommand: CommandSpec = createPendingCommand('clone <ids>', "Copy scan profiles between environments");
