import { isDeepStrictEqual } from 'node:util';
import {
  dropMaskedValues,
  fillMaskedForCheck,
  fillMaskedFrom,
  findClearSecrets,
  makeSafeImage,
  readPointer,
} from '../../../connections/images.js';
import { stripServerManaged } from '../../../connections/server-managed.js';
import { findChangedFields } from '../../../diff/compare.js';
import { valueAtComparedPath } from '../../../diff/normalize.js';
import type { Problem } from '../../../errors.js';
import { applyOverrides } from '../../../importer/overrides.js';
import { checkEntryForSend } from '../../../importer/preflight.js';
import type { Connection } from '../../../model/connection.js';
import { isMasked, registerSecretsOf } from '../../../secrets.js';
import {
  changedSinceReason,
  type History,
  planCreatedUndo,
  type UndoContext,
  type UndoStep,
} from '../../undo-plan.js';

/**
 * The undo step of one connection (pure): created -> deleted when unchanged since; updated or deleted
 * -> put back (masked secrets left out, so the service keeps its own, unless the run sent that secret:
 * then `--overrides` supplies its earlier value) or created again (secrets from `--overrides`).
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
  const base = { ...(stripServerManaged(before) as Connection), name: h.name, type: h.type };
  // The before-image is what to put back; `--overrides` supplies only the secrets it holds masked.
  const restored = fillMaskedFrom(base, applyOverrides(base, overrides)) as Connection;
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
  const since = changedSinceReason(h, (written) =>
    findChangedFields(written as Connection, current, secretFields).filter((f) =>
      changedSinceLeftOut(f.path, written, current, before),
    ),
  );
  if (since !== undefined) return step({ kind: 'left', reason: since });
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

/**
 * Whether a field differing between what the update wrote and the object now changed since. One left out
 * (masked) is kept (contract, Converge): a top-level secret shows masked, the rest as before. A nested one
 * (encrypted custom field) may not be kept, unseen behind a mask: changed, so undo never erases a value.
 */
function changedSinceLeftOut(
  path: string,
  written: Readonly<Record<string, unknown>>,
  current: Readonly<Record<string, unknown>>,
  before: Readonly<Record<string, unknown>>,
): boolean {
  if (valueAtComparedPath(written, path) !== undefined) return true;
  const now = valueAtComparedPath(current, path);
  if (now === undefined) return false;
  if (isMasked(now)) return path.lastIndexOf('/') !== 0;
  return !isDeepStrictEqual(now, valueAtComparedPath(before, path));
}
