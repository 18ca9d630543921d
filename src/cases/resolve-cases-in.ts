/** The `cases resolve` workflow: resolve cases one at a time, with an audit reason, in a confirmed environment. */
import type { ClientFactory, EnvironmentResolver } from '../api/client-factory.js';
import { assertWriteConfirmed } from '../protected.js';
import { type CaseTarget, lookUpCases } from './look-up.js';
import { type ResolveOutcome, type ResolveRun, resolveCases } from './resolve.js';

/** What {@link resolveCasesIn} resolves, checked. */
export interface ResolveCasesOptions {
  readonly ids: readonly string[];
  /** From checkAuditReason. */
  readonly reason: string;
  /** `--confirm`: the name of a protected environment. */
  readonly confirm: string | undefined;
  /** `--dry-run`: look the ids up and say what would be sent; no PATCH. */
  readonly dryRun?: boolean;
}

/** The outside world of {@link resolveCasesIn}. */
export interface ResolveCasesPorts {
  readonly resolveEnvironment: EnvironmentResolver;
  readonly createClient: ClientFactory;
  readonly signal: AbortSignal;
}

/** Progress of a resolve run. */
export type ResolveCasesEvent = { readonly kind: 'case-settled'; readonly outcome: ResolveOutcome };

/** What a resolve run did, and in which environment; `targets`: each id given and the id written to. */
export interface ResolveCasesResult {
  readonly environment: string;
  readonly targets: readonly CaseTarget[];
  /** Undefined for a dry run. */
  readonly run: ResolveRun | undefined;
}

/** Resolve the cases in order (one failing case fails alone; auth, network and Ctrl-C stop the run). */
export async function resolveCasesIn(
  options: ResolveCasesOptions,
  ports: ResolveCasesPorts,
  onEvent: (event: ResolveCasesEvent) => void,
): Promise<ResolveCasesResult> {
  const environment = await ports.resolveEnvironment();
  const client = ports.createClient(environment);
  try {
    if (options.dryRun !== true) assertWriteConfirmed(environment, options.confirm);
    const targets = await lookUpCases(client, options.ids, ports.signal);
    if (options.dryRun === true) return { environment: environment.label, targets, run: undefined };
    const run = await resolveCases(client, targets, options.reason, {
      signal: ports.signal,
      onOutcome: (outcome) => onEvent({ kind: 'case-settled', outcome }),
    });
    return { environment: environment.label, targets, run };
  } finally {
    client.close();
  }
}
