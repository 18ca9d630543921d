import type { Problem } from '../../../errors.js';
import type { ScanProfile } from '../../../model/scan-profile.js';
import {
  changedSinceReason,
  type History,
  planCreatedUndo,
  type UndoContext,
  type UndoStep,
} from '../../undo-plan.js';
import { compareProfile, type DataSourceRef, placeDataSources, readProfileImage } from './kind.js';

const NO_IDS = { idByName: new Map(), nameById: new Map(), recreated: new Set<string>() };

/**
 * A scan profile's undo step (pure): created -> deleted by id if unchanged; updated -> put back; deleted ->
 * recreated, `dataSourceList` remapped by name to the target's ids; one-time: `left` (it would scan).
 */
export function planProfileUndo(
  h: History,
  current: ScanProfile | undefined,
  context: Pick<UndoContext, 'includeInDoubt' | 'references'>,
): UndoStep {
  const ids = context.references ?? NO_IDS;
  const step = <const T extends object>(own: T) =>
    Object.assign({ object: 'scan-profile' as const, name: h.name, type: '' }, own);
  const targetId = typeof current?._id === 'string' ? current._id : undefined;
  const nameOf = (ref: string) => ids.nameById.get(ref);
  if (h.firstOp === 'create') {
    const created = planCreatedUndo(h, current, context, step, (image) => {
      const wanted = readProfileImage(image);
      return (
        wanted && compareProfile(wanted.scanProfile, wanted.dataSourceNames, current as ScanProfile, nameOf)
      );
    });
    return created.kind === 'delete-created' && targetId ? { ...created, targetId } : created;
  }
  const before = readProfileImage(h.firstBefore);
  if (before === undefined) {
    return step({ kind: 'left', reason: 'the journal holds no image of it before the run (older journal)' });
  }
  const list = Array.isArray(before.scanProfile.dataSourceList) ? before.scanProfile.dataSourceList : [];
  // An element that was a name is sent as it was.
  const refs: DataSourceRef[] = list.map((ref, i) => {
    const name = before.dataSourceNames[i] ?? null;
    return name !== null && ref === name
      ? { ref, targetName: null, asName: true }
      : { ref, targetName: name, asName: false };
  });
  // A connection this undo creates again gets its id only then: placed again when sent.
  const { list: remapped, missing } = placeDataSources(refs, ids.idByName);
  const problems: Problem[] = missing
    .filter((m) => !ids.recreated.has(m.name))
    .map((m) => ({
      entry: h.name,
      path: `/dataSourceList/${m.index}`,
      message: `connection '${m.name}' is not in the target, so the profile cannot name it`,
    }));
  const body = { ...before.scanProfile, name: h.name, dataSourceList: remapped };
  const image = { scanProfile: body, dataSourceNames: before.dataSourceNames };
  if (current !== undefined) {
    const fields = compareProfile(before.scanProfile, before.dataSourceNames, current, nameOf);
    if (fields.length === 0) return step({ kind: 'reverted' });
    const since = changedSinceReason(h, (image) => {
      const written = readProfileImage(image);
      return written && compareProfile(written.scanProfile, written.dataSourceNames, current, nameOf);
    });
    if (since !== undefined) return step({ kind: 'left', reason: since });
    if (problems.length > 0) return step({ kind: 'invalid', problems });
    return step({
      kind: 'put-back',
      body,
      fields: fields.map((f) => f.path),
      current: { scanProfile: current },
      image,
      secretsSent: [],
      ...(targetId ? { targetId } : {}),
      refs,
    });
  }
  if (before.scanProfile.isSingleRunScan === true) {
    return step({
      kind: 'left',
      reason:
        'a one-time profile (isSingleRunScan): creating it again starts a scan; create it with profiles create --allow-run',
    });
  }
  if (problems.length > 0) return step({ kind: 'invalid', problems });
  return step({ kind: 're-create', body, image, refs });
}
