import type { CommandSpec } from './command.js';
import { createPendingCommand } from './not-implemented.js';

/** `list`: placeholder until its issue lands. */
export const casesListCommand: CommandSpec = createPendingCommand('list', "List security cases");
