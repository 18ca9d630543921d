import type { CommandSpec } from './command.js';
import { createPendingCommand } from './not-implemented.js';

/** `emulator`: placeholder until its issue lands. */
export const emulatorCommand: CommandSpec = createPendingCommand('emulator', "Run a local Data Discovery Service");
