/**
 * The `cases update` workflow: preview the cases the filters select, then, once the caller confirms
 * (a prompt, `--yes`), send one bulk PATCH `cases:update`, with an optional audit trail. A dry run
 * returns the preview; nothing matched sends nothing.
 */
import type { ClientFactory, EnvironmentResolver } from '../api/client-factory.js';
import type { BulkCaseUpdate, SecurityCase } from '../model/security-case.js';
import { assertWriteConfirmed } from '../protected.js';
import { applyCaseUpdate, type CaseUpdateResult, previewCaseUpdate } from './update.js';

/** What {@link updateCases} changes, checked; `auditFile` is absolute. */
export interface UpdateCasesOptions {
  readonly update: BulkCaseUpdate;
  readonly dryRun: boolean;
  readonly auditFile: string | undefined;
  /** `--reason`: kept on every audit line. */
  readonly reason?: string | undefined;
  /** `--confirm`: the name of a protected environment. */
  readonly confirm: string | undefined;
}

/** The outside world of {@link updateCases}. */
export interface UpdateCasesPorts {
  readonly resolveEnvironment: EnvironmentResolver;
  readonly createClient: ClientFactory;
  /**
   * Asked once the preview is known and non-empty, before anything is sent: resolves to go on, throws
   * (PreflightError, InterruptedError) to stop.
   */
  readonly confirmUpdate: (matched: readonly SecurityCase[]) => Promise<void>;
  readonly signal: AbortSignal;
  /** The audit's clock; default the system's. */
  readonly now?: () => Date;
}

/** Progress of an update. */
export type UpdateCasesEvent = { readonly kind: 'preview'; readonly matched: readonly SecurityCase[] };

/** What an update did. */
export type UpdateCasesResult =
  | { readonly kind: 'dry-run'; readonly matched: readonly SecurityCase[] }
  | { readonly kind: 'nothing-matched' }
  | {
      readonly kind: 'updated';
      readonly matched: readonly SecurityCase[];
      readonly result: CaseUpdateResult;
    };

/** Preview, confirm, update (see the module comment). */
export async function updateCases(
  options: UpdateCasesOptions,
  ports: UpdateCasesPorts,
  onEvent: (event: UpdateCasesEvent) => void,
): Promise<UpdateCasesResult> {
  const environment = await ports.resolveEnvironment();
  const client = ports.createClient(environment);
  try {
    if (!options.dryRun) assertWriteConfirmed(environment, options.confirm);
    const matched = await previewCaseUpdate(client, options.update.filters, { signal: ports.signal });
    if (options.dryRun) return { kind: 'dry-run', matched };
    onEvent({ kind: 'preview', matched });
    if (matched.length === 0) return { kind: 'nothing-matched' };
    await ports.confirmUpdate(matched);
    const result = await applyCaseUpdate(client, options.update, matched, {
      auditFile: options.auditFile,
      reason: options.reason,
      environment: environment.url,
      ...(ports.now ? { now: ports.now } : {}),
    });
    return { kind: 'updated', matched, result };
  } finally {
    client.close();
  }
}
