import type { CommandSpec } from './command.js';
import { createPendingCommand } from './not-implemented.js';

/** `resolve <ids>`: placeholder until its issue lands. */
export const casesResolveCommand: CommandSpec = createPendingCommand('resolve <ids>', "Resolve cases one at a time with an audit reason");
