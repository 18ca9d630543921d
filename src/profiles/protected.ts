/**
 * The protected-environment rule (contract section 1): a `protected` environment is written to only
 * with `--confirm ENV_NAME`. Used by every write of `profiles` and `cases`.
 */
import type { ResolvedEnvironment } from '../config.js';
import { PreflightError } from '../errors.js';

/**
 * Refuse (exit 3, nothing sent) a write to a protected environment without `--confirm <its name>`, and
 * a `--confirm` that names another environment than the one written to (a sign of a wrong target).
 */
export function assertWriteConfirmed(
  environment: ResolvedEnvironment,
  confirm: string | undefined,
  option = '--env',
): void {
  const name = environment.name ?? environment.label;
  if (confirm !== undefined && confirm !== name) {
    throw new PreflightError(
      `--confirm ${confirm} does not name the environment written to (${option} ${name}); nothing was sent`,
      [],
      {
        hint: `Pass --confirm ${name} if ${name} is the environment you mean`,
      },
    );
  }
  if (environment.protected && confirm === undefined) {
    throw new PreflightError(`${name} is a protected environment; nothing was sent`, [], {
      hint: `Pass --confirm ${name} to write to it`,
    });
  }
}
