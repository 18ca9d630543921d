/**
 * The protected-environment rule (contract section 1): a `protected` environment is written to only with
 * `--confirm ENV_NAME`, and a `--confirm` naming another environment is refused (a wrong target).
 */
import type { ResolvedEnvironment } from './config.js';
import { PreflightError } from './errors.js';

/** Why a write is refused, and what to do. */
export interface WriteRefusal {
  readonly reason: string;
  readonly hint: string;
}

/** The refusal of a write to `environment` with `--confirm confirm`, if any; `option` chose it (`--to`). */
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

/** For a dry run into a protected environment: the name the real run's `--confirm` must give, if refused. */
export function confirmRequired(
  environment: Pick<ResolvedEnvironment, 'name' | 'label' | 'protected'>,
  confirm: string | undefined,
): string | undefined {
  const refused = environment.protected === true && checkWriteConfirmed(environment, confirm) !== undefined;
  return refused ? (environment.name ?? environment.label) : undefined;
}

/** Throw a {@link PreflightError} (exit 3) for a write {@link checkWriteConfirmed} refuses. */
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
