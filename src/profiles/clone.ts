import { type ClientFactory, type EnvironmentResolver, withClient } from '../api/client-factory.js';
import { listConnectionKeys } from '../api/connections.js';
import type { HttpClient } from '../api/http.js';
import { createScanProfile, getScanProfile, listScanProfiles } from '../api/scan-profiles.js';
import type { ConnectionKey } from '../api/types.js';
import { countOf } from '../display-name.js';
import { ApiError, DdsError, InterruptedError, PreflightError, type Problem } from '../errors.js';
import type { Logger } from '../log.js';
import { assertWriteConfirmed, confirmRequired } from '../protected.js';
import { readIdMap } from './id-map.js';
import {
  type DataSourceMapping,
  type IdMap,
  needsSourceConnections,
  type ProfileClonePlan,
  type ProfileCloneStep,
  planProfileClone,
  type SourceProfile,
} from './plan.js';

/** Read what the plan needs, and plan; an unreadable profile (400/404) is one more plan problem. */
async function prepareProfileClone(
  source: HttpClient,
  target: HttpClient,
  options: CloneProfilesOptions,
  idMap: IdMap | undefined,
  signal: AbortSignal,
): Promise<ProfileClonePlan> {
  const profiles: SourceProfile[] = [];
  const unreadable: Problem[] = [];
  for (const id of options.ids) {
    if (signal.aborted)
      throw new InterruptedError('Interrupted before anything was created', { hint: 'Re-run the command' });
    try {
      profiles.push({ sourceId: id, profile: await getScanProfile(source, id) });
    } catch (error) {
      if (error instanceof ApiError && (error.status === 400 || error.status === 404)) {
        unreadable.push({ entry: id, message: `source profile ${id} cannot be read: ${error.message}` });
      } else {
        throw error;
      }
    }
  }
  const sourceConnections: ConnectionKey[] = needsSourceConnections(profiles, idMap)
    ? await listConnectionKeys(source, signal)
    : [];
  const targetConnections = await listConnectionKeys(target, signal);
  const targetProfiles = new Map<string, string | undefined>();
  for (const p of await listScanProfiles(target, { signal })) {
    if (typeof p.name === 'string') targetProfiles.set(p.name, p._id);
  }
  const plan = planProfileClone({
    profiles,
    sourceConnections,
    targetConnections,
    idMap,
    allowRun: options.allowRun,
    targetProfiles,
  });
  return { ...plan, problems: [...unreadable, ...plan.problems] };
}

/** Refuse the run (exit 3, nothing created) when the plan has any problem, listing them all. */
export function assertPlanClean(plan: ProfileClonePlan): void {
  if (plan.problems.length === 0) return;
  const hints: string[] = [];
  if (plan.missingConnections.length > 0) {
    hints.push(
      `Import the missing connections into the target first (dds-migrate import SNAPSHOT --to ENV --only ${plan.missingConnections.join(',')}), or pass the import's --id-map`,
    );
  }
  if (plan.steps.some((s) => s.kind === 'blocked' && s.singleRun))
    hints.push('Pass --allow-run to create one-time profiles (each starts a scan)');
  throw new PreflightError(
    `Pre-flight refused the clone (${countOf(plan.problems.length, 'problem')}); nothing was created`,
    plan.problems,
    hints.length > 0 ? { hint: hints.join('. ') } : {},
  );
}

/** One profile's outcome. */
export type CloneResult = { readonly sourceId: string; readonly name: string } & (
  | {
      readonly kind: 'created';
      readonly targetId: string | undefined;
      readonly dataSources: readonly DataSourceMapping[];
    }
  | { readonly kind: 'exists'; readonly targetId: string | undefined }
  | { readonly kind: 'failed'; readonly status: number | undefined; readonly message: string }
);

/** What the clone did; `stopped` is the error that ended it early (auth, network, Ctrl-C). */
export interface CloneOutcome {
  readonly results: readonly CloneResult[];
  readonly notAttempted: readonly ProfileCloneStep[];
  readonly stopped: DdsError | undefined;
}

/**
 * One at a time: a POST is not retried and a one-time profile starts a scan, so nothing is sent in
 * parallel or twice. A 4xx/5xx fails that profile; an error that concerns every request stops the run.
 */
async function applyProfileClone(
  target: HttpClient,
  plan: ProfileClonePlan,
  ports: CloneProfilesPorts,
): Promise<CloneOutcome> {
  const results: CloneResult[] = [];
  const steps = plan.steps;
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i] as ProfileCloneStep;
    if (step.kind !== 'create' && step.kind !== 'exists') continue;
    const { sourceId, name } = step;
    const stop = (stopped: DdsError): CloneOutcome => ({
      results,
      notAttempted: steps.slice(i).filter((s) => s.kind === 'create'),
      stopped,
    });
    let result: CloneResult;
    if (step.kind === 'exists') {
      result = { kind: 'exists', sourceId, name, targetId: step.targetId };
    } else {
      if (ports.signal.aborted)
        return stop(
          new InterruptedError('Interrupted', { hint: 'Profiles listed as not attempted were not created' }),
        );
      try {
        const created = await createScanProfile(target, step.body);
        result = { kind: 'created', sourceId, name, targetId: created._id, dataSources: step.dataSources };
      } catch (error) {
        if (!(error instanceof DdsError)) throw error;
        if (!(error instanceof ApiError)) return stop(error);
        result = { kind: 'failed', sourceId, name, status: error.status, message: error.message };
      }
    }
    results.push(result);
    ports.log.info({ sourceId, name, result: result.kind }, 'profile cloned');
  }
  return { results, notAttempted: [], stopped: undefined };
}

/** Checked; `idMap` is an absolute path. */
export interface CloneProfilesOptions {
  readonly ids: readonly string[];
  readonly idMap: string | undefined;
  readonly dryRun: boolean;
  readonly allowRun: boolean;
  /** `--confirm`: the name of a protected target. */
  readonly confirm: string | undefined;
}

export interface CloneProfilesPorts {
  readonly resolveSource: EnvironmentResolver;
  readonly resolveTarget: EnvironmentResolver;
  readonly createClient: ClientFactory;
  readonly log: Logger;
  readonly signal: AbortSignal;
}

/** `profiles clone`: plan, refuse any problem, then create; a dry run returns the plan, what is sent. */
export async function cloneProfiles(
  options: CloneProfilesOptions,
  ports: CloneProfilesPorts,
): Promise<
  | {
      readonly kind: 'dry-run';
      readonly from: string;
      readonly to: string;
      readonly plan: ProfileClonePlan;
      /** A protected target: the real run needs `--confirm` with this name. */
      readonly confirmRequired: string | undefined;
    }
  | { readonly kind: 'applied'; readonly from: string; readonly to: string; readonly outcome: CloneOutcome }
> {
  const idMap = options.idMap === undefined ? undefined : await readIdMap(options.idMap);
  const side = (resolveEnvironment: EnvironmentResolver) => ({ resolveEnvironment, ...ports });
  return withClient(side(ports.resolveSource), (source, sourceEnvironment) =>
    withClient(side(ports.resolveTarget), async (target, targetEnvironment) => {
      if (!options.dryRun) assertWriteConfirmed(targetEnvironment, options.confirm, '--to');
      const plan = await prepareProfileClone(source, target, options, idMap, ports.signal);
      const labels = { from: sourceEnvironment.label, to: targetEnvironment.label };
      if (options.dryRun) {
        const required = confirmRequired(targetEnvironment, options.confirm);
        return { kind: 'dry-run', ...labels, plan, confirmRequired: required };
      }
      assertPlanClean(plan);
      const outcome = await applyProfileClone(target, plan, ports);
      return { kind: 'applied', ...labels, outcome };
    }),
  );
}
