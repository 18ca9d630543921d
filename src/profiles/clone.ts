/**
 * The `profiles clone` workflow: read the profiles from the source, plan (pure, {@link planProfileClone}:
 * data sources remapped by name or through an import's id map), refuse the whole run if any profile has
 * a problem, then create them one by one in the target. A dry run returns the plan (the caller prints
 * it, then refuses it if it has problems), so it shows exactly what the real run would send.
 */
import { type ClientFactory, type EnvironmentResolver, withClient } from '../api/client-factory.js';
import { listConnectionKeys } from '../api/connections.js';
import type { HttpClient } from '../api/http.js';
import { createScanProfile, getScanProfile, listScanProfiles } from '../api/scan-profiles.js';
import type { ConnectionKey } from '../api/types.js';
import { ApiError, DdsError, InterruptedError, PreflightError, type Problem } from '../errors.js';
import type { Logger } from '../log.js';
import { assertWriteConfirmed } from '../protected.js';
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

/**
 * Read the profiles and the connection lists the plan needs, and plan. A profile the source does not
 * have (400/404) becomes a plan problem, so every problem of the run is reported at once.
 */
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

/** Refuse the run (exit 3, nothing created) when the plan has any problem; the message lists them all. */
export function assertPlanClean(plan: ProfileClonePlan): void {
  if (plan.problems.length === 0) return;
  const listed = plan.problems
    .map((p) => `${p.entry ?? ''}${p.path ? ` ${p.path}` : ''}: ${p.message}`)
    .join('; ');
  const hints: string[] = [];
  if (plan.missingConnections.length > 0) {
    hints.push(
      `Import the missing connections into the target first (dds-migrate import SNAPSHOT --to ENV --only ${plan.missingConnections.join(',')}), or pass the import's --id-map`,
    );
  }
  if (plan.steps.some((s) => s.kind === 'blocked' && s.singleRun))
    hints.push('Pass --allow-run to create one-time profiles (each starts a scan)');
  throw new PreflightError(
    `pre-flight failed for ${plan.problems.length === 1 ? '1 problem' : `${plan.problems.length} problems`}, nothing was created: ${listed}`,
    plan.problems,
    hints.length > 0 ? { hint: hints.join('. ') } : {},
  );
}

export type CloneResult =
  | {
      readonly kind: 'created';
      readonly sourceId: string;
      readonly name: string;
      readonly targetId: string | undefined;
      readonly dataSources: readonly DataSourceMapping[];
    }
  | {
      /** Already in the target by name: nothing was sent. */
      readonly kind: 'exists';
      readonly sourceId: string;
      readonly name: string;
      readonly targetId: string | undefined;
    }
  | {
      readonly kind: 'failed';
      readonly sourceId: string;
      readonly name: string;
      readonly status: number | undefined;
      readonly message: string;
    };

/** What {@link applyProfileClone} did; `stopped` is the error that ended the run early (auth, network, Ctrl-C). */
export interface CloneOutcome {
  readonly results: readonly CloneResult[];
  readonly notAttempted: readonly ProfileCloneStep[];
  readonly stopped: DdsError | undefined;
}

/**
 * Create the planned profiles one at a time (sequential: each POST is not retried and a one-time one
 * starts a scan, so nothing is sent in parallel or twice). A 4xx/5xx answer fails that profile and the
 * run goes on; an error that concerns every request (auth, network, Ctrl-C) stops it.
 */
async function applyProfileClone(
  target: HttpClient,
  plan: ProfileClonePlan,
  options: { readonly signal: AbortSignal; readonly onResult: (result: CloneResult) => void },
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
      if (options.signal?.aborted)
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
    options.onResult(result);
  }
  return { results, notAttempted: [], stopped: undefined };
}

/** What {@link cloneProfiles} does, checked; `idMap` is an absolute path. */
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

/** Clone scan profiles from the source to the target (see the module comment), with the labels of both sides. */
export async function cloneProfiles(
  options: CloneProfilesOptions,
  ports: CloneProfilesPorts,
): Promise<
  | { readonly kind: 'dry-run'; readonly from: string; readonly to: string; readonly plan: ProfileClonePlan }
  | { readonly kind: 'applied'; readonly from: string; readonly to: string; readonly outcome: CloneOutcome }
> {
  const idMap = options.idMap === undefined ? undefined : await readIdMap(options.idMap);
  const side = (resolveEnvironment: EnvironmentResolver) => ({ resolveEnvironment, ...ports });
  return withClient(side(ports.resolveSource), (source, sourceEnvironment) =>
    withClient(side(ports.resolveTarget), async (target, targetEnvironment) => {
      if (!options.dryRun) assertWriteConfirmed(targetEnvironment, options.confirm, '--to');
      const plan = await prepareProfileClone(source, target, options, idMap, ports.signal);
      const labels = { from: sourceEnvironment.label, to: targetEnvironment.label };
      if (options.dryRun) return { kind: 'dry-run', ...labels, plan };
      assertPlanClean(plan);
      const outcome = await applyProfileClone(target, plan, {
        signal: ports.signal,
        onResult: (r) =>
          ports.log.info({ sourceId: r.sourceId, name: r.name, result: r.kind }, 'profile cloned'),
      });
      return { kind: 'applied', ...labels, outcome };
    }),
  );
}
