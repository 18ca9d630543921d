/** The scan profile endpoints (`GET`/`POST /scanProfiles`, `GET`/`PUT`/`DELETE /scanProfiles/{id}`). */
import { withSourceNames } from './deployment.js';
import { isObjectId, newObjectId } from './ids.js';
import {
  badRequest,
  type HandlerDeps,
  isObject,
  notFound,
  ok,
  type Reply,
  type RequestContext,
} from './reply.js';
import type { ScanProfileRecord } from './types.js';

const PROFILE_SERVER_MANAGED = new Set(['_id', 'id', 'createdAt', 'updatedAt', 'created_at', 'updated_at']);

function checkSchedule(schedule: unknown): string | null {
  if (!isObject(schedule)) return 'schedule must be an object {cronExpression, timeZone}';
  const cron = schedule.cronExpression;
  if (typeof cron !== 'string' || !/^\S+(\s+\S+){4,5}$/.test(cron.trim())) {
    return `schedule.cronExpression must be a cron expression of 5 or 6 fields, got ${JSON.stringify(cron)}`;
  }
  const tz = schedule.timeZone;
  if (typeof tz !== 'string' || tz === '') return 'schedule.timeZone must be an IANA time zone such as UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
  } catch {
    return `schedule.timeZone '${tz}' is not a known time zone`;
  }
  return null;
}

/** The problem with a profile body, or null; `self` is the profile being updated (its own name is free). */
function checkProfileInput(body: Record<string, unknown>, deps: HandlerDeps, self?: string): string | null {
  const { name, dataSourceList, scanTemplateId, isSingleRunScan, schedule } = body;
  if (typeof name !== 'string' || name.trim() === '') return 'Scan profile name is required';
  if (!Array.isArray(dataSourceList) || dataSourceList.length === 0) {
    return 'dataSourceList must be a non-empty array of data source ids';
  }
  for (const [i, ds] of dataSourceList.entries()) {
    if (typeof ds !== 'string') return `dataSourceList[${i}] must be a string`;
    // Real bodies list data sources by _id or by name (api-notes); either must exist here.
    if (deps.store.getConnectionById(ds) === undefined && deps.store.getConnection(ds) === undefined) {
      return `dataSourceList[${i}]: unknown data source '${ds}'`;
    }
  }
  if (typeof scanTemplateId !== 'string' || !deps.store.isScanTemplate(scanTemplateId)) {
    return `Invalid scanTemplateId ${JSON.stringify(scanTemplateId)}`;
  }
  if (isSingleRunScan !== undefined && typeof isSingleRunScan !== 'boolean') {
    return 'isSingleRunScan must be a boolean';
  }
  const single = isSingleRunScan === true;
  const scheduled = schedule !== undefined && schedule !== null;
  if (single && scheduled) return 'Give either isSingleRunScan: true or a schedule, not both';
  if (!single && !scheduled) return 'Give either isSingleRunScan: true or a schedule';
  if (scheduled) {
    const problem = checkSchedule(schedule);
    if (problem !== null) return problem;
  }
  const existing = deps.store.getProfileByName(name);
  // [guess] A duplicate name answers 400 "... already exists", as for connections.
  if (existing !== undefined && existing._id !== self) return `Scan profile ${name} already exists`;
  return null;
}

export function createProfile(ctx: RequestContext, deps: HandlerDeps): Reply {
  const body = ctx.body;
  if (!isObject(body)) return badRequest('Request body must be a scan profile object');
  const problem = checkProfileInput(body, deps);
  if (problem !== null) return badRequest(problem);
  const name = body.name as string;
  const clean: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (!PROFILE_SERVER_MANAGED.has(k)) clean[k] = v;
  const now = new Date().toISOString();
  const _id = newObjectId();
  const profile = { ...clean, _id, createdAt: now, updatedAt: now } as unknown as ScanProfileRecord;
  deps.store.putProfile(profile);
  deps.record.addCreate({ kind: 'scanProfile', name, id: _id, at: Date.now() });
  if (body.isSingleRunScan === true) {
    deps.store.recordScan({
      scanId: newObjectId(),
      profileId: _id,
      profileName: name,
      dataSourceList: [...(body.dataSourceList as string[])],
      at: Date.now(),
    });
  }
  return ok(structuredClone(profile), true);
}

/** `GET scanProfiles` ([code]): `{"scanProfiles":[...]}`, no envelope, in creation order. */
export function listProfiles(deps: HandlerDeps): Reply {
  return ok({ scanProfiles: deps.store.profiles.map((p) => answerProfile(p, deps)) });
}

/** A stored profile as answered: a copy, its data sources by name when the deployment lists them so. */
function answerProfile(profile: ScanProfileRecord, deps: HandlerDeps): ScanProfileRecord {
  const copy = structuredClone(profile);
  if (deps.settings.profileSources !== 'names') return copy;
  return withSourceNames(copy, (id) => deps.store.getConnectionById(id)?.name);
}

/** The stored profile of a path id, or the reply: 400 when not 24 hex, 404 when unknown (as GET). */
function findProfile(id: string, deps: HandlerDeps): { profile: ScanProfileRecord } | { reply: Reply } {
  if (!isObjectId(id))
    return { reply: badRequest(`Invalid scan profile id '${id}': expected 24 hex digits`) };
  const profile = deps.store.getProfile(id);
  if (profile === undefined) return { reply: notFound(`Scan profile ${id} not found`) };
  return { profile };
}

/**
 * `PUT scanProfiles/{id}` ([guess]): the body replaces the profile (validated as a create; its own name
 * is not a duplicate); `_id` and `createdAt` kept, `updatedAt` renewed. No scan is started. Answers the
 * profile as stored, as a create does.
 */
export function updateProfile(id: string, ctx: RequestContext, deps: HandlerDeps): Reply {
  const lookup = findProfile(id, deps);
  if ('reply' in lookup) return lookup.reply;
  const found = lookup.profile;
  const body = ctx.body;
  if (!isObject(body)) return badRequest('Request body must be a scan profile object');
  const problem = checkProfileInput(body, deps, found._id);
  if (problem !== null) return badRequest(problem);
  const clean: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (!PROFILE_SERVER_MANAGED.has(k)) clean[k] = v;
  const profile = {
    ...clean,
    _id: found._id,
    createdAt: found.createdAt,
    updatedAt: new Date().toISOString(),
  } as unknown as ScanProfileRecord;
  deps.store.replaceProfile(profile);
  deps.record.addChange({ op: 'update', kind: 'scanProfile', name: profile.name, id, at: Date.now() });
  return ok(structuredClone(profile), true);
}

/** `DELETE scanProfiles/{id}` ([guess]): 200 `{"_id", "name", "deleted": true}`. */
export function deleteProfile(id: string, deps: HandlerDeps): Reply {
  const lookup = findProfile(id, deps);
  if ('reply' in lookup) return lookup.reply;
  const found = lookup.profile;
  deps.store.deleteProfile(id);
  deps.record.addChange({ op: 'delete', kind: 'scanProfile', name: found.name, id, at: Date.now() });
  return ok({ _id: id, name: found.name, deleted: true }, true);
}

export function getProfile(id: string, deps: HandlerDeps): Reply {
  const lookup = findProfile(id, deps);
  return 'reply' in lookup ? lookup.reply : ok(answerProfile(lookup.profile, deps));
}
