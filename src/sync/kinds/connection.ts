/**
 * The connection kind: keyed by name; how the executor writes a data source connection
 * (`/ds_connections`: spec 4.x, api-notes [code]); what `--on-conflict update` and `--prune` need of
 * it, bound to the template catalog (the diff's comparison, the PUT body of an update with masked
 * values left out so that the service keeps the stored secret, the update's pre-flight check, masked
 * images for the journal); and its planning rules ({@link planImport}).
 */
import {
  createConnection,
  deleteConnection,
  getConnectionByName,
  listConnections,
  updateConnection,
} from '../../api/connections.js';
import type { HttpClient } from '../../api/http.js';
import {
  dropMaskedValues,
  fillMaskedForCheck,
  findClearSecrets,
  makeSafeImage,
  readPointer,
} from '../../connections/images.js';
import { stripServerManaged } from '../../connections/server-managed.js';
import { findChangedFields } from '../../diff/compare.js';
import { valueAtComparedPath } from '../../diff/normalize.js';
import type { Problem } from '../../errors.js';
import { applyOverrides, EMPTY_OVERRIDES, type Overrides, overrideSets } from '../../importer/overrides.js';
import type {
  ConvergeHelpers,
  ImportPlan,
  JournaledWrite,
  PlanEntry,
  PlanInput,
  PlanStep,
  PlanStepKind,
  PreparedEntry,
  SendStep,
  TargetConnection,
} from '../../importer/plan.js';
import { PLAN_STEP_KINDS } from '../../importer/plan.js';
import { checkEntryForSend, type EntryTemplates } from '../../importer/preflight.js';
import { PreparedSource, PreparedUpdate } from '../../importer/prepared-sources.js';
import { fieldAt, held } from '../../importer/source.js';
import type { Connection } from '../../model/connection.js';
import { isMasked, registerSecretsOf } from '../../secrets.js';
import type { KindWriter } from '../execute.js';
import type { SyncKind } from '../kind.js';
import { type Decision, planKind } from '../plan.js';
import { type History, planCreatedUndo, type UndoContext, type UndoStep } from '../undo-plan.js';

/** The executor's writer of connections, bound to `client`. */
function connectionWriter(client: HttpClient): KindWriter {
  return {
    // The user's Ctrl-C does not abort a POST in flight: it settles and is journaled.
    create: async (body) => (await createConnection(client, { ...body }))._id,
    update: async (target, body, signal) =>
      (await updateConnection(client, target.name, { ...body }, { signal })).kind === 'absent'
        ? 'absent'
        : 'applied',
    remove: async (target, signal) =>
      (await deleteConnection(client, target.name, { signal })).kind === 'absent' ? 'absent' : 'applied',
    lookup: async (name, signal) => {
      const found = await getConnectionByName(client, name, { signal });
      const id = typeof found?._id === 'string' ? found._id : undefined;
      return found === undefined ? undefined : { id, createdAt: found.created_at };
    },
  };
}

/** The converge helpers of a plan, bound to a catalog and the overrides (where a secret comes from). */
export function createConvergeHelpers(
  catalog: EntryTemplates & { secretFields(type: string): ReadonlySet<string> },
  overrides: Overrides = EMPTY_OVERRIDES,
): ConvergeHelpers {
  const secretFields = (type: string) => catalog.secretFields(type);
  const typeOf = (c: Readonly<Record<string, unknown>>) => (typeof c.type === 'string' ? c.type : '');
  const updateBody: ConvergeHelpers['updateBody'] = (entry) => {
    const { body } = dropMaskedValues(entry.body);
    return { body, secretsSent: findClearSecrets(body, secretFields(entry.type)) };
  };
  return {
    // A field whose snapshot value is masked is left out of the PUT (the service keeps what it holds),
    // so it cannot justify an update: counted as one, the same update was planned on every run.
    compare: (entry, target) =>
      findChangedFields(entry.body as Connection, target, secretFields).filter(
        (field) => !isMasked(valueAtComparedPath(entry.body, field.path)),
      ),
    updateBody,
    secretsWritten: (entry) => {
      const { body, secretsSent } = updateBody(entry);
      return secretsSent.map((path) => ({
        path,
        from: overrideSets(entry, body, path, overrides) ? 'overrides' : 'snapshot',
      }));
    },
    // The entry's own fields, not a spread: a prepared entry makes its safe image when asked.
    checkUpdate: (entry) =>
      checkEntryForSend(
        {
          name: entry.name,
          type: entry.type,
          sourceId: entry.sourceId,
          body: fillMaskedForCheck(entry.body),
        },
        catalog,
      ).problems,
    imageOf: (connection) => makeSafeImage(connection, secretFields(typeOf(connection))),
  };
}

/**
 * The connection plan, by the planner's rules (`sync/plan.ts`), and its counts. The steps of its own:
 * a second entry of a name -> `invalid`; a create in doubt -> `reconcile` (looked up, when sent, by the
 * name its intent used); `--on-conflict update` -> `update` when a compared field differs (the
 * comparison of `diff`), else `unchanged`, or `done` with `op: 'update'` when the run being finished
 * updated it; a journaled delete gone from the target -> `done` with `op: 'delete'`. An entry that
 * would be sent (create, rename, reconcile) but fails its checks becomes `invalid`.
 */
export function planImport(input: PlanInput): ImportPlan {
  const prepare = input.prepare ?? asPrepared;
  const { converge } = input;
  const typeOf = (o: { type?: string; connection?: Connection }) =>
    o.type ?? (typeof o.connection?.type === 'string' ? o.connection.type : '');
  const send = (entry: PlanEntry, kind: SendStep['kind'], targetName: string, intentAt?: string) => {
    const source = new PreparedSource(prepare, entry, targetName);
    const problems = input.check(entry, () => prepare(entry));
    if (problems.length > 0) return stepOf(entry, { kind: 'invalid', wouldBe: kind, targetName, problems });
    return stepOf(
      entry,
      kind === 'reconcile' ? { kind, targetName, source, intentAt } : { kind, targetName, source },
    );
  };
  const step = (entry: PlanEntry, d: Decision<TargetConnection, JournaledWrite>): PlanStep => {
    const targetId = d.current?._id;
    switch (d.kind) {
      case 'done':
        return stepOf(entry, { kind: 'done', targetName: d.targetName, targetId: d.written?.targetId });
      case 'in-doubt':
        // A renamed entry is re-sent under the name its intent used, never under a new one.
        return send(entry, 'reconcile', d.targetName, d.written?.intentAt);
      case 'create':
      case 'rename':
        return send(entry, d.kind, d.targetName);
      case 'update': {
        const current = d.current as TargetConnection;
        return (current.connection !== undefined || current.compared !== undefined) && converge !== undefined
          ? planUpdate(entry, () => prepare(entry), current, converge, d.written)
          : stepOf(entry, { kind: 'exists', targetId });
      }
      default:
        return stepOf(entry, { kind: d.kind, targetId });
    }
  };
  const steps = planKind(
    {
      nameOf: (entry: PlanEntry) => entry.name,
      typeOf,
      duplicate: (entry) =>
        stepOf(entry, {
          kind: 'invalid',
          wouldBe: 'create',
          targetName: entry.name,
          problems: [
            { entry: entry.name, type: entry.type, message: 'the snapshot holds this name more than once' },
          ],
        }),
      step,
      remove: (t): PlanStep => ({
        kind: 'delete',
        name: t.name,
        type: typeOf(t),
        sourceId: undefined,
        targetName: t.name,
        targetId: t._id,
        before: t.before ?? held((converge as ConvergeHelpers).imageOf(t.connection ?? { name: t.name })),
      }),
      removed: (name, state): PlanStep => ({
        kind: 'done',
        op: 'delete',
        name,
        type: state.type ?? '',
        sourceId: undefined,
        targetName: name,
        targetId: undefined,
      }),
    },
    {
      desired: input.entries,
      actual: input.target,
      journal: input.journal,
      onConflict: input.onConflict,
      only: input.only,
      prune: input.prune === true && converge !== undefined,
    },
  );
  const counts = Object.fromEntries(PLAN_STEP_KINDS.map((k) => [k, 0])) as Record<PlanStepKind, number>;
  for (const s of steps) counts[s.kind] += 1;
  const sends = counts.create + counts.rename + counts.reconcile;
  return { steps, counts, sends, changes: sends + counts.update + counts.delete };
}

/**
 * A step: the entry's fields (only those: a placed entry's `place` stays out), then the step's own.
 * Built on a literal with `Object.assign`, not with `{...base, ...}`: V8 gives each object a spread
 * builds here a shape of its own (100 000 shapes, more memory than the steps, for an import of 100 000
 * entries).
 */
function stepOf<const T extends object>(entry: PlanEntry, own: T): PlanEntry & T {
  return Object.assign({ name: entry.name, type: entry.type, sourceId: entry.sourceId }, own);
}

/** The default {@link PlanInput.prepare}: entries given whole. */
function asPrepared(entry: PlanEntry): PreparedEntry {
  if (!('body' in entry))
    throw new Error(`planImport: entry ${entry.name} has no body and no prepare was given`);
  return entry as PreparedEntry;
}

/**
 * An entry present in the target under `--on-conflict update`: `update`, `unchanged`, `done` or
 * `invalid`. The target's connection is compared now, or was when listed (`compared`): then an
 * unchanged entry is not prepared again.
 */
function planUpdate(
  planned: PlanEntry,
  prepared: () => PreparedEntry,
  current: TargetConnection,
  converge: ConvergeHelpers,
  written: JournaledWrite | undefined,
): PlanStep {
  const targetId = current._id;
  const fields =
    current.compared ??
    converge.compare(prepared(), current.connection as Connection).map((f) => fieldAt(f.path));
  if (fields.length === 0) {
    if (written?.op === 'update' && written.state !== 'failed')
      return stepOf(planned, { kind: 'done', op: 'update', targetName: planned.name, targetId });
    return stepOf(planned, { kind: 'unchanged', targetId });
  }
  const entry = prepared();
  const problems = converge.checkUpdate(entry);
  if (problems.length > 0)
    return stepOf(entry, { kind: 'invalid', wouldBe: 'update', targetName: entry.name, problems });
  return stepOf(planned, {
    kind: 'update',
    targetName: planned.name,
    targetId,
    fields,
    secrets: converge.secretsWritten(entry),
    before: current.before ?? held(converge.imageOf(current.connection as Connection)),
    source: new PreparedUpdate(prepared, converge),
  });
}

/**
 * The undo step of one connection against the target's current one (pure): created by the run ->
 * deleted when unchanged since (compared as `diff` compares); updated or deleted -> put back (PUT of
 * the before-image; a masked secret is left out, so the service keeps the stored one, unless the run
 * sent that secret: then `--overrides` must supply its earlier value) or created again (POST, secrets
 * from `--overrides`).
 */
export function planConnectionUndo(
  h: History,
  current: Connection | undefined,
  context: UndoContext,
): UndoStep {
  const { catalog, overrides } = context;
  const secretFields = (type: string) => catalog.secretFields(type);
  const step = <const T extends object>(own: T) =>
    Object.assign({ object: 'connection' as const, name: h.name, type: h.type }, own);
  if (h.firstOp === 'create') {
    return planCreatedUndo(h, current, context, step, (created) =>
      findChangedFields(created as Connection, current as Connection, secretFields),
    );
  }
  const before = h.firstBefore ?? {};
  const restored = applyOverrides(
    { ...(stripServerManaged(before) as Connection), name: h.name, type: h.type },
    overrides,
  ) as Connection;
  registerSecretsOf(restored, secretFields(h.type));
  const entry = { name: h.name, type: h.type, sourceId: undefined, body: restored };
  if (current === undefined) {
    const problems = checkEntryForSend(entry, catalog).problems;
    if (problems.length > 0) return step({ kind: 'invalid', problems });
    return step({ kind: 're-create', body: restored, image: makeSafeImage(restored, secretFields(h.type)) });
  }
  const fields = findChangedFields(before as Connection, current, secretFields);
  const secretsToPutBack = context.putBackDone ? [] : [...(h.secretsSent ?? [])];
  if (fields.length === 0 && secretsToPutBack.length === 0) return step({ kind: 'reverted' });
  const problems: Problem[] = [];
  for (const pointer of secretsToPutBack) {
    const value = readPointer(restored, pointer);
    if (value === undefined || value === null || value === '' || isMasked(value)) {
      problems.push({
        entry: h.name,
        type: h.type,
        path: pointer,
        message: 'the import changed this secret; supply its earlier value with --overrides',
      });
    }
  }
  problems.push(...checkEntryForSend({ ...entry, body: fillMaskedForCheck(restored) }, catalog).problems);
  if (problems.length > 0) return step({ kind: 'invalid', problems });
  const body = dropMaskedValues(restored).body;
  return step({
    kind: 'put-back',
    body,
    fields: fields.map((f) => f.path),
    current: makeSafeImage(current, secretFields(h.type)),
    image: makeSafeImage(body, secretFields(h.type)),
    secretsSent: findClearSecrets(body, secretFields(h.type)),
  });
}

/** The connection kind, as the engine sees it. */
export const connectionKind: SyncKind = {
  object: 'connection',
  label: 'connection',
  writer: connectionWriter,
  // undo
  // Streamed, not kept: 100 000 connections are planned as the listing hands them out.
  current: (client, signal) => listConnections(client, { signal }),
  undo: planConnectionUndo,
  oneAtATime: false,
  undoPrefix: '',
  beforeOptional: false,
  runsKey: 'connections',
};
