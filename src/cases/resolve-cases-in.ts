/** The `cases resolve` workflow: resolve cases one at a time, with an audit reason, in a confirmed environment. */
import type { ClientFactory, EnvironmentResolver } from '../api/client-factory.js';
import { assertWriteConfirmed } from '../protected.js';
import { type ResolveOutcome, type ResolveRun, resolveCases } from './resolve.js';

/** What {@link resolveCasesIn} resolves, checked. */
export interface ResolveCasesOptions {
  readonly ids: readonly string[];
  /** From checkAuditReason. */
  readonly reason: string;
  /** `--confirm`: the name of a protected environment. */
  readonly confirm: string | undefined;
}

/** The outside world of {@link resolveCasesIn}. */
export interface ResolveCasesPorts {
  readonly resolveEnvironment: EnvironmentResolver;
  readonly createClient: ClientFactory;
  readonly signal: AbortSignal;
}

/** Progress of a resolve run. */
export type ResolveCasesEvent = { readonly kind: 'case-settled'; readonly outcome: ResolveOutcome };

/** What a resolve run did, and in which environment. */
export interface ResolveCasesResult {
  readonly environment: string;
  readonly run: ResolveRun;
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
    assertWriteConfirmed(environment, options.confirm);
    const run = await resolveCases(client, options.ids, options.reason, {
      signal: ports.signal,
      onOutcome: (outcome) => onEvent({ kind: 'case-settled', outcome }),
    });
    return { environment: environment.label, run };
  } finally {
    client.close();
  }
}
