/**
 * The protected-environment rule (contract section 1): a `protected` environment is written to only
 * with `--confirm ENV_NAME`, and a `--confirm` that names another environment than the one written to
 * is refused (a sign of a wrong target). One rule for every command that writes: `profiles`, `cases`
 * and the import's pre-flight.
 */
import type { ResolvedEnvironment } from './config.js';
import { PreflightError } from './errors.js';

/** Why a write is refused: `reason` says what (without "nothing was sent"), `hint` what to do. */
export interface WriteRefusal {
  readonly reason: string;
  readonly hint: string;
}

/**
 * Pure check of the rule for a write to `environment` with `--confirm confirm` (undefined when not
 * given); undefined when the write may go ahead. `option` is how the environment was chosen (`--env`,
 * `--to`), for the message.
 */
export function checkWriteConfirmed(
  environment: Pick<ResolvedEnvironment, 'name' | 'label' | 'protected'>,
  confirm: string | undefined,
  option = '--env',
): WriteRefusal | undefined {
  const name = environment.name ?? environment.label;
  if (confirm !== undefined && confirm !== name) {
    return {
      reason: `--confirm ${confirm} does not name the environment written to (${option} ${name})`,
      hint: `Pass --confirm ${name} if ${name} is the environment you mean`,
    };
  }
  if (environment.protected && confirm === undefined) {
    return { reason: `${name} is a protected environment`, hint: `Pass --confirm ${name} to write to it` };
  }
  return undefined;
}

/**
 * Refuse (PreflightError, exit 3, nothing sent) a write that {@link checkWriteConfirmed} refuses. Call it
 * before the first write request.
 */
export function assertWriteConfirmed(
  environment: Pick<ResolvedEnvironment, 'name' | 'label' | 'protected'>,
  confirm: string | undefined,
  option = '--env',
): void {
  const refusal = checkWriteConfirmed(environment, confirm, option);
  if (refusal !== undefined) {
    throw new PreflightError(`${refusal.reason}; nothing was sent`, [], { hint: refusal.hint });
  }
}
