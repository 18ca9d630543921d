import type { CommandSpec } from './command.js';
import { createPendingCommand } from './not-implemented.js';

/** `update`: placeholder until its issue lands. */
export const casesUpdateCommand: CommandSpec = createPendingCommand('update', "Update cases in bulk by filter");
