// biome-ignore-all lint/suspicious/noTemplateCurlyInString: "${env:VAR}" is a literal overrides placeholder
/**
 * The undo plan (pure): one run's journal records -> what each object it touched was before the run ->
 * against the target as it is now, one step per object.
 *
 * A connection:
 * - created by the run: `delete-created` when it still matches what was created (compared as `diff`
 *   compares), `left` when it changed since, nothing when it is gone. Only a create the run provably
 *   made (its own request answered with success) is deleted; one whose answer was lost and that a
 *   look-up then found may be someone else's: `left`, unless `--include-in-doubt`;
 * - updated or deleted by the run: `put-back` (PUT of the before-image; a masked secret is left out, so
 *   the service keeps the stored one, unless the run sent that secret: then `--overrides` must supply its
 *   earlier value) when it differs, `re-create` (POST, secrets from `--overrides`) when it is gone,
 *   nothing when it already equals the before-image.
 * A scan profile: the same, by name; created -> deleted when unchanged since; updated -> put back;
 * deleted -> created again, its `dataSourceList` remapped to the ids the target has now (by connection
 * name; elements that were names stay names). A one-time profile is not created again (it would start
 * a scan): `left`.
 */
import {
  dropMaskedValues,
  fillMaskedForCheck,
  findClearSecrets,
  makeSafeImage,
  readPointer,
} from '../connections/images.js';
import { stripServerManaged } from '../connections/server-managed.js';
import { findChangedFields } from '../diff/compare.js';
import type { Problem } from '../errors.js';
import { applyOverrides, type Overrides } from '../importer/overrides.js';
import { checkEntryForSend } from '../importer/preflight.js';
import { held, type Source } from '../importer/source.js';
import type { Connection } from '../model/connection.js';
import type { ScanProfile } from '../model/scan-profile.js';
import type { TemplateCatalog } from '../schema/catalog.js';
import { isMasked, registerSecretsOf } from '../secrets.js';
import type { JournalObject, JournalRecord, SafeImage } from './journal/records.js';
import { type JournalRecordReader, type RecordPlace, writeKey } from './journal/replay.js';
import {
  compareProfile,
  type DataSourceRef,
  placeDataSources,
  readProfileImage,
} from './kinds/scan-profile.js';
import { notOursReason } from './ownership.js';

/** A masked image, held or read again from the journal when it is needed. */
export type ImageSource = Source<SafeImage | undefined>;

/** The image of the intent record at `at` (a class, not a closure: one shape for 100 000 of them). */
class JournaledImage implements ImageSource {
  constructor(
    private readonly reader: JournalRecordReader,
    private readonly at: RecordPlace,
  ) {}

  load(): SafeImage | undefined {
    const record = this.reader.read(this.at);
    return record.kind === 'intent' && record.op !== 'delete' ? record.image : undefined;
  }
}

/** What one run did to one object. */
export interface History {
  readonly object: JournalObject;
  /** The object's name in the target. */
  readonly name: string;
  type: string;
  readonly firstOp: 'create' | 'update' | 'delete';
  readonly firstBefore: SafeImage | undefined;
  /** The last image the run wrote (create or update); undefined after a delete or in an old journal. */
  lastImage: ImageSource | undefined;
  /** Secrets the run's updates sent in clear (JSON pointers); undefined when none. */
  secretsSent: Set<string> | undefined;
  lastIndex: number;
  applied: boolean;
  /** An intent with no outcome: it may have been applied. */
  pending: boolean;
  /** The create was found by a look-up after its answer was lost (or never settled): maybe not ours. */
  inDoubt: boolean;
  /** Why it is provably someone else's (a `not ours` create): left, even with `--include-in-doubt`. */
  notOurs?: string;
}

/**
 * Per object, what run `run` did, newest first. Fed one record at a time; with `at` (where the record
 * is in the journal, and `reader` to read it there) an image is not kept but read again when needed.
 */
export function createRunHistory(
  run: number,
  reader?: JournalRecordReader,
): {
  add(record: JournalRecord, index: number, at?: RecordPlace): void;
  finish(): History[];
} {
  const byKey = new Map<string, History>();
  const add = (record: JournalRecord, index: number, at?: RecordPlace): void => {
    if (record.kind !== 'intent' && record.kind !== 'outcome') return;
    if ((record.run ?? 1) !== run) return;
    const key = writeKey(record.object, record.targetName);
    if (record.kind === 'intent') {
      let h = byKey.get(key);
      // A write that settled without applying anything (failed, someone else's) starts nothing.
      if (h === undefined || (!h.applied && !h.pending)) {
        const firstBefore = record.op === 'create' ? undefined : record.before;
        const type = typeof firstBefore?.type === 'string' ? firstBefore.type : '';
        h = {
          object: record.object,
          name: record.targetName,
          type,
          firstOp: record.op,
          firstBefore,
          lastImage: undefined,
          secretsSent: undefined,
          lastIndex: index,
          applied: false,
          pending: false,
          inDoubt: false,
        };
        byKey.set(key, h);
      }
      h.lastIndex = index;
      h.pending = true;
      if (record.op === 'delete') h.lastImage = undefined;
      else {
        h.lastImage =
          at !== undefined && reader !== undefined && record.image !== undefined
            ? new JournaledImage(reader, at)
            : held(record.image);
        if (record.op === 'update' && (record.secretsSent?.length ?? 0) > 0) {
          h.secretsSent ??= new Set();
          for (const p of record.secretsSent ?? []) h.secretsSent.add(p);
        }
      }
      const imageType = record.op === 'delete' ? undefined : record.image?.type;
      if (h.type === '' && typeof imageType === 'string') h.type = imageType;
      return;
    }
    const h = byKey.get(key);
    if (h === undefined) return;
    h.pending = false;
    if (record.result !== 'failed' && record.result !== 'exists') h.applied = true;
    if (record.result === 'created') h.inDoubt = record.via === 'lookup';
    if (record.result === 'exists' && record.createdAt) h.notOurs = notOursReason(record.createdAt);
    h.lastIndex = index;
  };
  return {
    add,
    finish: () => {
      const histories = [...byKey.values()]
        .filter((h) => h.applied || h.pending || h.notOurs !== undefined)
        .map((h) => {
          // A create that never settled and is found now may be ours or someone else's.
          if (h.firstOp === 'create' && h.pending && !h.applied) h.inDoubt = true;
          return h;
        })
        .sort((a, b) => b.lastIndex - a.lastIndex);
      byKey.clear();
      return histories;
    },
  };
}

interface StepBase {
  readonly object: JournalObject;
  /** The object's name in the target. */
  readonly name: string;
  readonly type: string;
}

/** One step of an undo. */
export type UndoStep =
  /** The run created it and it still matches: DELETE (a profile: by the id it has now). */
  | (StepBase & { readonly kind: 'delete-created'; readonly before: ImageSource; readonly targetId?: string })
  /** The run updated (or deleted, and someone re-created) it: PUT of the before-image. */
  | (StepBase & {
      readonly kind: 'put-back';
      readonly body: Readonly<Record<string, unknown>>;
      readonly fields: readonly string[];
      readonly current: SafeImage;
      /** The body, secrets masked; the secrets it sends in clear (JSON pointers). */
      readonly image: SafeImage;
      readonly secretsSent: readonly string[];
      readonly targetId?: string;
      /** A profile's `dataSourceList`, by connection name: remapped to the target's ids when sent. */
      readonly dataSources?: readonly DataSourceRef[];
    })
  /** The run deleted it: POST of the before-image. */
  | (StepBase & {
      readonly kind: 're-create';
      readonly body: Readonly<Record<string, unknown>>;
      readonly image: SafeImage;
      readonly dataSources?: readonly DataSourceRef[];
    })
  /** Not reverted, and why (changed since, in doubt whose it is, a kind it cannot revert). */
  | (StepBase & { readonly kind: 'left'; readonly reason: string })
  /** Already as before the run (reverted earlier, or never applied). */
  | (StepBase & { readonly kind: 'reverted' })
  /** Cannot be reverted as it stands (a secret missing, a template problem): a pre-flight problem. */
  | (StepBase & { readonly kind: 'invalid'; readonly problems: readonly Problem[] });

/** True for steps that send a request. */
export function isWritingStep(step: UndoStep): boolean {
  return step.kind === 'delete-created' || step.kind === 'put-back' || step.kind === 're-create';
}

/** What planning a step needs besides the history and the object now. */
export interface UndoContext {
  readonly catalog: TemplateCatalog;
  readonly overrides: Overrides;
  /** True when this undo already put this connection back (its secrets need not be asked again). */
  readonly putBackDone: boolean;
  /** `--include-in-doubt`: objects whose create was in doubt are deleted too. */
  readonly includeInDoubt: boolean;
}

const IN_DOUBT_REASON =
  "its create was in doubt (the answer was lost and a look-up found the name): it may be someone else's; pass --include-in-doubt to delete it";

/**
 * The step of an object the run created: gone -> `reverted`; in doubt whose it is -> `left` (unless
 * `--include-in-doubt`); changed since (`changes` of what was created, undefined when the journal holds
 * no usable image) -> `left`; else `delete-created`.
 */
function planCreatedUndo(
  h: History,
  current: unknown,
  context: Pick<UndoContext, 'includeInDoubt'>,
  step: <const T extends object>(own: T) => StepBase & T,
  changes: (created: SafeImage) => readonly { readonly path: string }[] | undefined,
): UndoStep {
  if (current === undefined) return step({ kind: 'reverted' });
  if (h.notOurs !== undefined) return step({ kind: 'left', reason: h.notOurs });
  if (h.inDoubt && !context.includeInDoubt) return step({ kind: 'left', reason: IN_DOUBT_REASON });
  const image = h.lastImage;
  const created = image?.load();
  const fields = created === undefined ? undefined : changes(created);
  if (image === undefined || fields === undefined) {
    return step({ kind: 'left', reason: 'the journal holds no image of what was created (older journal)' });
  }
  if (fields.length > 0) {
    const paths = fields.map((f) => f.path).join(', ');
    return step({ kind: 'left', reason: `changed since the import created it (${paths})` });
  }
  return step({ kind: 'delete-created', before: image });
}

/** Decide the step of one connection against the target's current object (pure). */
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

/** The target's connections, for remapping a profile's `dataSourceList`: name -> id, id -> name. */
export interface TargetConnectionIds {
  readonly idByName: ReadonlyMap<string, string | undefined>;
  readonly nameById: ReadonlyMap<string, string>;
}

/** Decide the step of one scan profile against the target's current profile (pure). */
export function planProfileUndo(
  h: History,
  current: ScanProfile | undefined,
  ids: TargetConnectionIds,
  context: Pick<UndoContext, 'includeInDoubt'> & {
    /** Connections this undo creates again (before its profiles). */
    readonly recreated: ReadonlySet<string>;
  },
): UndoStep {
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
  // An element that was a name is sent as it was (no connection looked up for it).
  const dataSources: DataSourceRef[] = list.map((ref, i) => {
    const name = before.dataSourceNames[i] ?? null;
    return name !== null && ref === name
      ? { ref, targetName: null, asName: true }
      : { ref, targetName: name, asName: false };
  });
  // A connection this undo creates again gets its id only then: placed when the step is sent.
  const { list: remapped, missing } = placeDataSources(dataSources, ids.idByName);
  const problems: Problem[] = missing
    .filter((m) => !context.recreated.has(m.name))
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
    if (problems.length > 0) return step({ kind: 'invalid', problems });
    return step({
      kind: 'put-back',
      body,
      fields: fields.map((f) => f.path),
      current: { scanProfile: current },
      image,
      secretsSent: [],
      ...(targetId ? { targetId } : {}),
      dataSources,
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
  return step({ kind: 're-create', body, image, dataSources });
}
