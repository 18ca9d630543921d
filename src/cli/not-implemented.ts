/**
 * Placeholder for a command whose issue is still open: it parses like the real one and says so.
 * Each placeholder is replaced by the real command file when its issue lands.
 */
import { UsageError } from '../errors.js';
import type { CommandSpec } from './command.js';

/** A command that refuses to run because it is not built yet. */
export function createPendingCommand(command: string, describe: string): CommandSpec {
  return {
    command,
    describe: `${describe} (not available yet)`,
    builder: (y) => y.strict(false),
    run: () => Promise.reject(new UsageError(`'${command}' is not available in this version yet`)),
  };
}
