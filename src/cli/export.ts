import type { CommandSpec } from './command.js';
import { createPendingCommand } from './not-implemented.js';

/** `export`: placeholder until its issue lands. */
export const exportCommand: CommandSpec = createPendingCommand('export', "Write a snapshot of an environment's connections");
