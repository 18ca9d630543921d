/**
 * The `profiles clone` workflow: plan every profile (data sources remapped by name or through an
 * import's id map), refuse the whole run if any profile has a problem, then create them in the target,
 * one at a time. A dry run returns the plan (the caller prints it, then refuses it if it has problems).
 */
import type { ClientFactory, EnvironmentResolver } from '../api/client-factory.js';
import type { Logger } from '../log.js';
import { assertWriteConfirmed } from '../protected.js';
import { applyProfileClone, assertPlanClean, type CloneOutcome, prepareProfileClone } from './clone.js';
import { readIdMap } from './id-map.js';
import type { ProfileClonePlan } from './plan.js';

/** What {@link cloneProfiles} does, checked; `idMap` is an absolute path. */
export interface CloneProfilesOptions {
  readonly ids: readonly string[];
  readonly idMap: string | undefined;
  readonly dryRun: boolean;
  readonly allowRun: boolean;
  /** `--confirm`: the name of a protected target. */
  readonly confirm: string | undefined;
}

/** The outside world of {@link cloneProfiles}. */
export interface CloneProfilesPorts {
  readonly resolveSource: EnvironmentResolver;
  readonly resolveTarget: EnvironmentResolver;
  readonly createClient: ClientFactory;
  readonly log: Logger;
  readonly signal: AbortSignal;
}

/** What a clone did: the plan of a dry run, or the outcome of a run; with the labels of both sides. */
export type CloneProfilesResult =
  | { readonly kind: 'dry-run'; readonly from: string; readonly to: string; readonly plan: ProfileClonePlan }
  | { readonly kind: 'applied'; readonly from: string; readonly to: string; readonly outcome: CloneOutcome };

/** Clone scan profiles from the source to the target (see the module comment). */
export async function cloneProfiles(
  options: CloneProfilesOptions,
  ports: CloneProfilesPorts,
): Promise<CloneProfilesResult> {
  const idMap = options.idMap === undefined ? undefined : await readIdMap(options.idMap);
  const sourceEnvironment = await ports.resolveSource();
  const source = ports.createClient(sourceEnvironment);
  try {
    const targetEnvironment = await ports.resolveTarget();
    const target = ports.createClient(targetEnvironment);
    try {
      if (!options.dryRun) assertWriteConfirmed(targetEnvironment, options.confirm, '--to');
      const plan = await prepareProfileClone(source, target, {
        ids: options.ids,
        idMap,
        allowRun: options.allowRun,
        signal: ports.signal,
      });
      const labels = { from: sourceEnvironment.label, to: targetEnvironment.label };
      if (options.dryRun) return { kind: 'dry-run', ...labels, plan };
      assertPlanClean(plan);
      const outcome = await applyProfileClone(target, plan, {
        signal: ports.signal,
        onResult: (r) =>
          ports.log.info({ sourceId: r.sourceId, name: r.name, result: r.kind }, 'profile cloned'),
      });
      return { kind: 'applied', ...labels, outcome };
    } finally {
      target.close();
    }
  } finally {
    source.close();
  }
}
