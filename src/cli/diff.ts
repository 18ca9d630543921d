import type { CommandSpec } from './command.js';
import { createPendingCommand } from './not-implemented.js';

/** `diff`: placeholder until its issue lands. */
export const diffCommand: CommandSpec = createPendingCommand('diff', "Show what differs between two environments or snapshots");
