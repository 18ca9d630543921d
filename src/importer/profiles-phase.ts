/**
 * The scan profile phase of `import` (snapshot format 2): after the connections, the snapshot's scan
 * profiles are made to match in the target, one request at a time, journaled like the connections.
 *
 * Plan (pure, {@link planProfiles}), per snapshot profile, in this order of precedence:
 * 1. `--only` given and the profile not named in it -> left out;
 * 2. the journal says an earlier run created / updated it -> `done`;
 * 3. one-time (`isSingleRunScan: true`) without `--allow-run` -> `skipped` (creating it starts a scan);
 * 4. a `dataSourceList` element whose connection is neither in the target nor created by this run
 *    -> `blocked` (a pre-flight problem: the run is refused, exit 3);
 * 5. the journal holds an intent without an outcome (in doubt): the target's list, read now, is asked
 *    by the name sent: found -> `done` (via look-up), else sent again;
 * 6. its name exists in the target: `skip` -> `exists`; `fail` -> `conflict` (pre-flight problem);
 *    `update` -> `update` when a compared field differs (the comparison of `diff`), else `unchanged`;
 *    `rename` -> `create` as `<name> (2)` (or the next free `(n)`);
 * 7. otherwise -> `create`.
 * With `prune` (and a snapshot that includes profiles), every profile of the target the snapshot does not
 * hold (within `--only`) -> `delete`.
 *
 * `dataSourceList` is remapped by connection name: element i names the connection
 * `dataSourceNames[i]` of the snapshot (an element with no recorded name is taken as a name when a
 * connection of that name exists); a connection this run renamed is followed to its new name; the id
 * sent is the target's id of that name, read after the connection phase (a source that listed data
 * sources by name gets names again). Order is kept.
 *
 * Run ({@link runProfilePhase}): sequential (few profiles; a one-time profile starts a scan, so nothing
 * is sent in parallel), an intent fsync'd before each request and an outcome after; a 4xx/5xx answer
 * fails that profile and the run goes on, an error that concerns every request (auth, network, Ctrl-C)
 * stops it with the intent in doubt, so that the re-run looks the name up before sending again: no
 * profile is ever created twice. Creating a scheduled profile starts no scan.
 */
import type { HttpClient } from '../api/http.js';
import {
  createScanProfile,
  deleteScanProfile,
  listScanProfiles,
  updateScanProfile,
} from '../api/scan-profiles.js';
import { compareNames } from '../connections/match.js';
import { compareProfileFields, toComparableProfile } from '../diff/scan-profiles.js';
import type { FieldChange } from '../diff/types.js';
import { ApiError, DdsError, InterruptedError, type Problem, UnavailableError } from '../errors.js';
import type { ScanProfile, SnapshotScanProfile } from '../model/scan-profile.js';
import { remapDataSourceList } from '../profiles/data-source-list.js';
import { isProfileServerField, stripProfileServerFields } from '../profiles/server-fields.js';
import { scrub } from '../secrets.js';
import type { Journal, JournalRecord, ProfileAction } from './journal.js';
import type { RateLimiter } from './throttle.js';

/** What to do with a profile whose name exists in the target (`--on-conflict`). */
export type ProfileOnConflict = 'skip' | 'fail' | 'rename' | 'update';

/** What the journal says about one profile (by its snapshot name; a delete by its target name). */
export type ProfileJournalState =
  | {
      readonly state: 'done';
      readonly action: ProfileAction;
      readonly targetName: string;
      readonly targetId: string | undefined;
    }
  | { readonly state: 'failed'; readonly action: ProfileAction; readonly targetName: string }
  | {
      readonly state: 'in-doubt';
      readonly action: ProfileAction;
      readonly targetName: string;
      readonly targetId: string | undefined;
      readonly attempt: number;
    };

/** Fold the profile records of a journal into per-profile states (other records are ignored). */
export function replayProfileRecords(
  records: readonly JournalRecord[],
): ReadonlyMap<string, ProfileJournalState> {
  const states = new Map<string, ProfileJournalState>();
  for (const r of records) {
    if (r.kind === 'profile-intent') {
      states.set(r.name, {
        state: 'in-doubt',
        action: r.action,
        targetName: r.targetName,
        targetId: r.targetId,
        attempt: r.attempt,
      });
    } else if (r.kind === 'profile-outcome') {
      states.set(
        r.name,
        r.result === 'done'
          ? { state: 'done', action: r.action, targetName: r.targetName, targetId: r.targetId }
          : { state: 'failed', action: r.action, targetName: r.targetName },
      );
    }
  }
  return states;
}

/** One `dataSourceList` element, resolved to a connection name of the target. */
export interface ProfileDataSource {
  /** As in the snapshot's profile. */
  readonly ref: string;
  /** The connection's name in the target (after a rename by this run). */
  readonly targetName: string;
  /** True when the source listed the data source by name: the name is sent, not the id. */
  readonly asName: boolean;
}

interface ProfileStepBase {
  /** The snapshot's profile name (a delete: the target's). */
  readonly name: string;
}

/** A step that sends a request. */
export type ProfileSendStep =
  | (ProfileStepBase & {
      readonly kind: 'create';
      /** The name POSTed (`<name> (2)` for `--on-conflict rename`). */
      readonly targetName: string;
      readonly profile: ScanProfile;
      readonly dataSources: readonly ProfileDataSource[];
      /** 2 or more: resent after an in-doubt intent that the target's list did not show. */
      readonly attempt: number;
    })
  | (ProfileStepBase & {
      readonly kind: 'update';
      readonly targetName: string;
      readonly targetId: string;
      readonly profile: ScanProfile;
      readonly dataSources: readonly ProfileDataSource[];
      readonly fields: readonly FieldChange[];
      readonly attempt: number;
    })
  | (ProfileStepBase & {
      readonly kind: 'delete';
      readonly targetName: string;
      readonly targetId: string;
      readonly attempt: number;
    });

/** One decision of the profile plan. */
export type ProfileStep =
  | ProfileSendStep
  | (ProfileStepBase & {
      readonly kind: 'done';
      readonly action: ProfileAction;
      readonly targetName: string;
      readonly targetId: string | undefined;
      /** `journal`: an earlier run recorded it; `lookup`: an in-doubt request was found applied now. */
      readonly via: 'journal' | 'lookup';
    })
  | (ProfileStepBase & { readonly kind: 'exists' | 'unchanged'; readonly targetId: string | undefined })
  | (ProfileStepBase & { readonly kind: 'skipped'; readonly reason: string })
  | (ProfileStepBase & { readonly kind: 'conflict'; readonly targetId: string | undefined })
  | (ProfileStepBase & { readonly kind: 'blocked'; readonly problems: readonly Problem[] });

/** The plan of the profile phase. */
export interface ProfilePlan {
  /** Snapshot profiles in name order, then the deletes (target name order). */
  readonly steps: readonly ProfileStep[];
  /** Pre-flight problems: conflicts (`--on-conflict fail`) and profiles naming absent connections. */
  readonly problems: readonly Problem[];
}

/** A connection of the target, as far as the plan needs it. */
export interface ProfileTargetConnection {
  readonly name: string;
  readonly _id?: string | undefined;
}

/** Input of {@link planProfiles}. */
export interface ProfilePlanInput {
  readonly profiles: readonly SnapshotScanProfile[];
  /** False for a snapshot whose header does not include scan profiles (version 1): nothing is planned. */
  readonly included: boolean;
  /** The target's profiles (`GET /scanProfiles`), read now. */
  readonly targetProfiles: readonly ScanProfile[];
  /** The target's connections, read now (before the connection phase). */
  readonly targetConnections: readonly ProfileTargetConnection[];
  /**
   * Connections this run creates or created (snapshot name -> name in the target): the connection
   * plan's create, rename, reconcile and done steps.
   */
  readonly createdConnections: ReadonlyMap<string, string>;
  readonly journal: ReadonlyMap<string, ProfileJournalState>;
  readonly onConflict: ProfileOnConflict;
  readonly prune: boolean;
  readonly allowRun: boolean;
  /** `--only`: profile names restored (and pruned within); undefined = all. */
  readonly only: ReadonlySet<string> | undefined;
}

const SINGLE_RUN_REASON =
  'one-time profile (isSingleRunScan): creating it starts a scan at once; pass --allow-run to create it';

/** Plan the profile phase (see the module comment). Pure. */
export function planProfiles(input: ProfilePlanInput): ProfilePlan {
  if (!input.included) return { steps: [], problems: [] };
  const targetByName = new Map<string, ScanProfile>();
  for (const p of input.targetProfiles) if (typeof p.name === 'string') targetByName.set(p.name, p);
  const connectionByName = new Map(input.targetConnections.map((c) => [c.name, c]));
  const connectionNameById = new Map<string, string>();
  for (const c of input.targetConnections) if (c._id !== undefined) connectionNameById.set(c._id, c.name);
  const reserved = new Set(targetByName.keys());
  for (const p of input.profiles) reserved.add(p.scanProfile.name);

  const steps: ProfileStep[] = [];
  const problems: Problem[] = [];
  const snapshotNames = new Set<string>();
  const sorted = [...input.profiles].sort((a, b) => compareNames(a.scanProfile.name, b.scanProfile.name));
  for (const entry of sorted) {
    const name = entry.scanProfile.name;
    snapshotNames.add(name);
    if (input.only !== undefined && !input.only.has(name)) continue;
    const journal = input.journal.get(name);
    if (journal?.state === 'done' && journal.action !== 'delete') {
      steps.push({
        kind: 'done',
        name,
        action: journal.action,
        targetName: journal.targetName,
        targetId: journal.targetId,
        via: 'journal',
      });
      continue;
    }
    if (entry.scanProfile.isSingleRunScan === true && !input.allowRun) {
      steps.push({ kind: 'skipped', name, reason: SINGLE_RUN_REASON });
      continue;
    }
    const resolved = resolveDataSources(entry, connectionByName, input.createdConnections);
    if (!resolved.ok) {
      problems.push(...resolved.problems);
      steps.push({ kind: 'blocked', name, problems: resolved.problems });
      continue;
    }
    const dataSources = resolved.dataSources;
    const attempt = journal?.state === 'in-doubt' ? journal.attempt + 1 : 1;
    if (journal?.state === 'in-doubt' && journal.action === 'create') {
      // The earlier run may have created it under the name it sent: the target's list says.
      const found = targetByName.get(journal.targetName);
      if (found !== undefined) {
        steps.push({
          kind: 'done',
          name,
          action: 'create',
          targetName: journal.targetName,
          targetId: found._id,
          via: 'lookup',
        });
        continue;
      }
      steps.push({
        kind: 'create',
        name,
        targetName: journal.targetName,
        profile: entry.scanProfile,
        dataSources,
        attempt,
      });
      continue;
    }
    const existing = targetByName.get(name);
    if (existing === undefined) {
      steps.push({
        kind: 'create',
        name,
        targetName: name,
        profile: entry.scanProfile,
        dataSources,
        attempt,
      });
      continue;
    }
    switch (input.onConflict) {
      case 'skip':
        steps.push({ kind: 'exists', name, targetId: existing._id });
        break;
      case 'fail':
        steps.push({ kind: 'conflict', name, targetId: existing._id });
        problems.push({
          entry: name,
          message: `scan profile '${name}' already exists in the target (--on-conflict fail)`,
        });
        break;
      case 'rename': {
        const targetName = nextFreeName(name, reserved);
        reserved.add(targetName);
        steps.push({ kind: 'create', name, targetName, profile: entry.scanProfile, dataSources, attempt });
        break;
      }
      case 'update': {
        const fields = compareWithTarget(entry, dataSources, existing, connectionNameById);
        if (fields.length === 0 || existing._id === undefined) {
          steps.push({ kind: 'unchanged', name, targetId: existing._id });
        } else {
          steps.push({
            kind: 'update',
            name,
            targetName: name,
            targetId: existing._id,
            profile: entry.scanProfile,
            dataSources,
            fields,
            attempt,
          });
        }
        break;
      }
      default: {
        const unreachable: never = input.onConflict;
        throw new Error(`unknown --on-conflict ${String(unreachable)}`);
      }
    }
  }
  if (input.prune) {
    const extra = [...targetByName.values()]
      .filter((p) => !snapshotNames.has(p.name) && (input.only === undefined || input.only.has(p.name)))
      .sort((a, b) => compareNames(a.name, b.name));
    for (const p of extra) {
      if (p._id === undefined) continue;
      const journal = input.journal.get(p.name);
      steps.push({
        kind: 'delete',
        name: p.name,
        targetName: p.name,
        targetId: p._id,
        attempt: journal?.state === 'in-doubt' ? journal.attempt + 1 : 1,
      });
    }
    // A delete recorded done whose profile is gone: reported as done.
    for (const [name, state] of input.journal) {
      if (state.state === 'done' && state.action === 'delete' && !targetByName.has(name)) {
        steps.push({
          kind: 'done',
          name,
          action: 'delete',
          targetName: state.targetName,
          targetId: state.targetId,
          via: 'journal',
        });
      }
    }
  }
  return { steps, problems };
}

/** `<name> (2)`, `(3)`, ...: the first not taken. */
function nextFreeName(name: string, taken: ReadonlySet<string>): string {
  for (let n = 2; ; n++) {
    const candidate = `${name} (${n})`;
    if (!taken.has(candidate)) return candidate;
  }
}

function resolveDataSources(
  entry: SnapshotScanProfile,
  connectionByName: ReadonlyMap<string, ProfileTargetConnection>,
  created: ReadonlyMap<string, string>,
): { ok: true; dataSources: ProfileDataSource[] } | { ok: false; problems: Problem[] } {
  const remapped = remapDataSourceList(entry.scanProfile.dataSourceList, {
    recordedNames: entry.dataSourceNames,
    targetNameOf: (n) => created.get(n) ?? (connectionByName.has(n) ? n : undefined),
  });
  if (!remapped.ok) {
    const name = entry.scanProfile.name;
    return {
      ok: false,
      problems: remapped.problems.map((p) => ({
        entry: name,
        path: `/dataSourceList/${p.index}`,
        message: p.message,
      })),
    };
  }
  return {
    ok: true,
    dataSources: remapped.elements.map((e) => ({
      ref: e.ref,
      targetName: e.targetName,
      asName: e.form === 'name',
    })),
  };
}

/** The compared fields that differ between the snapshot's profile and the target's (diff semantics). */
function compareWithTarget(
  entry: SnapshotScanProfile,
  dataSources: readonly ProfileDataSource[],
  existing: ScanProfile,
  connectionNameById: ReadonlyMap<string, string>,
): FieldChange[] {
  const wanted = toComparableProfile(
    entry.scanProfile,
    dataSources.map((d) => d.targetName),
    isProfileServerField,
  );
  const list = Array.isArray(existing.dataSourceList) ? existing.dataSourceList : [];
  const current = toComparableProfile(
    existing,
    list.map((ref) => connectionNameById.get(ref) ?? ref),
    isProfileServerField,
  );
  return compareProfileFields(wanted, current);
}

// ---- run -------------------------------------------------------------------------------------------

/** How one profile step ended in this run. */
export type ProfileOutcome =
  | { readonly kind: 'done'; readonly targetId: string | undefined }
  | { readonly kind: 'failed'; readonly httpStatus: number | undefined; readonly message: string };

/** The outside world of {@link runProfilePhase}. */
export interface ProfilePhaseDeps {
  readonly client: HttpClient;
  readonly journal: Journal;
  /** The target's connections after the connection phase (name -> `_id`). */
  readonly connectionIds: ReadonlyMap<string, string | undefined>;
  readonly limiter?: RateLimiter;
  readonly signal: AbortSignal;
  readonly now?: () => Date;
}

/** What the phase did: an outcome per send step (by step index), and why it stopped early, if it did. */
export interface ProfilePhaseResult {
  readonly outcomes: ReadonlyMap<number, ProfileOutcome>;
  readonly stoppedBy: DdsError | undefined;
}

/** The body to send: server fields dropped, the target name, `dataSourceList` remapped. */
export function buildProfileBody(
  step: Extract<ProfileSendStep, { kind: 'create' | 'update' }>,
  connectionIds: ReadonlyMap<string, string | undefined>,
): { ok: true; body: Record<string, unknown> } | { ok: false; message: string } {
  const list: string[] = [];
  for (const ds of step.dataSources) {
    if (!connectionIds.has(ds.targetName)) {
      return {
        ok: false,
        message: `connection '${ds.targetName}' is not in the target (was its creation refused?)`,
      };
    }
    list.push(ds.asName ? ds.targetName : (connectionIds.get(ds.targetName) ?? ds.targetName));
  }
  return {
    ok: true,
    body: { ...stripProfileServerFields(step.profile), name: step.targetName, dataSourceList: list },
  };
}

/** Execute the plan's send steps, in order (see the module comment). Records journal steps for look-ups too. */
export async function runProfilePhase(
  plan: ProfilePlan,
  deps: ProfilePhaseDeps,
): Promise<ProfilePhaseResult> {
  const outcomes = new Map<number, ProfileOutcome>();
  const now = deps.now ?? (() => new Date());
  for (const [index, step] of plan.steps.entries()) {
    if (step.kind === 'done' && step.via === 'lookup') {
      await deps.journal.append({
        kind: 'profile-outcome',
        name: step.name,
        action: step.action,
        result: 'done',
        targetName: step.targetName,
        targetId: step.targetId,
        via: 'lookup',
        at: now().toISOString(),
      });
      continue;
    }
    if (step.kind !== 'create' && step.kind !== 'update' && step.kind !== 'delete') continue;
    if (deps.signal.aborted) {
      return {
        outcomes,
        stoppedBy: new InterruptedError('Interrupted', { hint: 'Re-run the same command to resume' }),
      };
    }
    let body: Record<string, unknown> | undefined;
    if (step.kind !== 'delete') {
      const built = buildProfileBody(step, deps.connectionIds);
      if (!built.ok) {
        outcomes.set(index, { kind: 'failed', httpStatus: undefined, message: built.message });
        continue;
      }
      body = built.body;
    }
    const action: ProfileAction = step.kind;
    let outcome: ProfileOutcome | undefined;
    let via: 'request' | 'lookup' = 'request';
    for (let attempt = step.attempt; outcome === undefined; attempt++) {
      await deps.limiter?.acquire(deps.signal);
      await deps.journal.append({
        kind: 'profile-intent',
        name: step.name,
        action,
        targetName: step.targetName,
        ...(step.kind === 'create' ? {} : { targetId: step.targetId }),
        attempt,
        at: now().toISOString(),
      });
      try {
        outcome = await sendStep(step, body, deps);
      } catch (error) {
        if (error instanceof ApiError && error.status !== undefined && error.status !== 401) {
          outcome = { kind: 'failed', httpStatus: error.status, message: scrub(error.message) };
        } else if (
          error instanceof UnavailableError &&
          attempt - step.attempt + 1 < MAX_ATTEMPTS &&
          !deps.signal.aborted
        ) {
          // The answer was lost: the request may have been applied. A create is looked up by name
          // before it is sent again; an update or a delete is idempotent and simply sent again.
          if (step.kind === 'create') {
            let found: ScanProfile | undefined;
            try {
              found = (await listScanProfiles(deps.client, { signal: deps.signal })).find(
                (p) => p.name === step.targetName,
              );
            } catch (lookupError) {
              if (lookupError instanceof DdsError) return { outcomes, stoppedBy: lookupError };
              throw lookupError;
            }
            if (found !== undefined) {
              outcome = { kind: 'done', targetId: found._id };
              via = 'lookup';
            }
          }
        } else if (error instanceof DdsError) {
          // Auth, a sick service, Ctrl-C: the intent stays in doubt; the re-run looks the name up first.
          return { outcomes, stoppedBy: error };
        } else {
          throw error;
        }
      }
    }
    await deps.journal.append({
      kind: 'profile-outcome',
      name: step.name,
      action,
      result: outcome.kind,
      targetName: step.targetName,
      ...(outcome.kind === 'done'
        ? { targetId: outcome.targetId, via }
        : { httpStatus: outcome.httpStatus, message: outcome.message }),
      at: now().toISOString(),
    });
    outcomes.set(index, outcome);
  }
  return { outcomes, stoppedBy: undefined };
}

/** Requests of one profile step in one run, when the answers are lost (then the run stops, in doubt). */
const MAX_ATTEMPTS = 3;

async function sendStep(
  step: ProfileSendStep,
  body: Record<string, unknown> | undefined,
  deps: ProfilePhaseDeps,
): Promise<ProfileOutcome> {
  switch (step.kind) {
    case 'create': {
      const created = await createScanProfile(deps.client, body ?? {});
      return { kind: 'done', targetId: created._id };
    }
    case 'update': {
      const updated = await updateScanProfile(deps.client, step.targetId, body ?? {}, {
        signal: deps.signal,
      });
      if (updated.kind === 'absent') {
        return {
          kind: 'failed',
          httpStatus: 404,
          message: `scan profile ${step.targetId} is no longer in the target`,
        };
      }
      return { kind: 'done', targetId: step.targetId };
    }
    case 'delete':
      // `absent`: already gone (maybe by an earlier attempt): the target is as wanted.
      await deleteScanProfile(deps.client, step.targetId, { signal: deps.signal });
      return { kind: 'done', targetId: step.targetId };
    default: {
      const unreachable: never = step;
      throw new Error(`unknown profile step ${JSON.stringify(unreachable)}`);
    }
  }
}

// ---- report ----------------------------------------------------------------------------------------

/** One `--report` line of a scan profile (`object: "scan profile"`). */
export type ProfileReportLine = {
  readonly object: 'scan profile';
  readonly name: string;
} & (
  | {
      readonly outcome: 'created' | 'renamed' | 'updated' | 'deleted';
      readonly targetName: string;
      readonly targetId: string | undefined;
      readonly earlierRun: boolean;
      readonly reconciled: boolean;
    }
  | { readonly outcome: 'exists' | 'unchanged'; readonly targetId: string | undefined }
  | { readonly outcome: 'skipped'; readonly reason: string }
  | {
      readonly outcome: 'failed';
      readonly targetName: string;
      readonly httpStatus: number | undefined;
      readonly message: string;
    }
  | { readonly outcome: 'invalid'; readonly problems: readonly Problem[] }
  | { readonly outcome: 'pending'; readonly targetName: string }
);

function doneOutcome(
  action: ProfileAction,
  name: string,
  targetName: string,
): 'created' | 'renamed' | 'updated' | 'deleted' {
  if (action === 'create') return targetName === name ? 'created' : 'renamed';
  return action === 'update' ? 'updated' : 'deleted';
}

/** One report line per step: the plan and what the run did. */
export function buildProfileReport(
  plan: ProfilePlan,
  outcomes: ReadonlyMap<number, ProfileOutcome>,
): ProfileReportLine[] {
  return plan.steps.map((step, index): ProfileReportLine => {
    const base = { object: 'scan profile' as const, name: step.name };
    switch (step.kind) {
      case 'done':
        return {
          ...base,
          outcome: doneOutcome(step.action, step.name, step.targetName),
          targetName: step.targetName,
          targetId: step.targetId,
          earlierRun: step.via === 'journal',
          reconciled: step.via === 'lookup',
        };
      case 'exists':
      case 'unchanged':
        return { ...base, outcome: step.kind, targetId: step.targetId };
      case 'conflict':
        return { ...base, outcome: 'exists', targetId: step.targetId };
      case 'skipped':
        return { ...base, outcome: 'skipped', reason: step.reason };
      case 'blocked':
        return { ...base, outcome: 'invalid', problems: step.problems };
      case 'create':
      case 'update':
      case 'delete': {
        const outcome = outcomes.get(index);
        if (outcome === undefined) return { ...base, outcome: 'pending', targetName: step.targetName };
        if (outcome.kind === 'failed') {
          return {
            ...base,
            outcome: 'failed',
            targetName: step.targetName,
            httpStatus: outcome.httpStatus,
            message: scrub(outcome.message),
          };
        }
        return {
          ...base,
          outcome: doneOutcome(step.kind, step.name, step.targetName),
          targetName: step.targetName,
          targetId: outcome.targetId,
          earlierRun: false,
          reconciled: false,
        };
      }
      default: {
        const unreachable: never = step;
        throw new Error(`unknown profile step ${JSON.stringify(unreachable)}`);
      }
    }
  });
}

/** Counts per outcome of the profile report. */
export function countProfileOutcomes(
  report: readonly ProfileReportLine[],
): Record<ProfileReportLine['outcome'], number> {
  const counts: Record<ProfileReportLine['outcome'], number> = {
    created: 0,
    renamed: 0,
    updated: 0,
    deleted: 0,
    exists: 0,
    unchanged: 0,
    skipped: 0,
    failed: 0,
    invalid: 0,
    pending: 0,
  };
  for (const line of report) counts[line.outcome] += 1;
  return counts;
}

/** The sends of a plan (creates, updates, deletes), for `--max-changes` and progress. */
export function countProfileSends(plan: ProfilePlan): number {
  return plan.steps.filter((s) => s.kind === 'create' || s.kind === 'update' || s.kind === 'delete').length;
}

/** One line per step for a dry run. */
export function describeProfileStep(step: ProfileStep): string {
  switch (step.kind) {
    case 'create':
      return `scan profile ${step.name}: create${step.targetName === step.name ? '' : ` as '${step.targetName}'`}${step.attempt > 1 ? ' (in doubt: not found in the target, sent again)' : ''}`;
    case 'update':
      return `scan profile ${step.name}: update (${step.fields.map((f) => f.path).join(', ')})`;
    case 'delete':
      return `scan profile ${step.name}: delete (not in the snapshot, --prune)`;
    case 'done':
      return `scan profile ${step.name}: done (${step.via === 'journal' ? 'by an earlier run' : 'found in the target after an interrupted request'})`;
    case 'exists':
      return `scan profile ${step.name}: exists in the target, skipped`;
    case 'unchanged':
      return `scan profile ${step.name}: unchanged`;
    case 'skipped':
      return `scan profile ${step.name}: skipped: ${step.reason}`;
    case 'conflict':
      return `scan profile ${step.name}: exists in the target (--on-conflict fail)`;
    case 'blocked':
      // The problems themselves are in the pre-flight's one list.
      return `scan profile ${step.name}: refused: ${step.problems.length} problem${step.problems.length === 1 ? '' : 's'} (listed on stderr)`;
    default: {
      const unreachable: never = step;
      throw new Error(`unknown profile step ${JSON.stringify(unreachable)}`);
    }
  }
}
