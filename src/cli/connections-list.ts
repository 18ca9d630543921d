import type { CommandSpec } from './command.js';
import { createPendingCommand } from './not-implemented.js';

/** `list`: placeholder until its issue lands. */
export const connectionsListCommand: CommandSpec = createPendingCommand('list', "List every connection of an environment, all pages");
