import type { CommandSpec } from './command.js';
import { createPendingCommand } from './not-implemented.js';

/** `import <snapshot>`: placeholder until its issue lands. */
export const importCommand: CommandSpec = createPendingCommand('import <snapshot>', "Create the connections of a snapshot in an environment, resumably");
