/**
 * The log levels, apart from the logger: the CLI declares `--log-level` with them before it knows
 * whether the run logs anything, and `log.ts` (which loads pino) is imported only by a command that runs.
 */
export type LogLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal' | 'silent';
export const LOG_LEVELS: readonly LogLevel[] = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];
