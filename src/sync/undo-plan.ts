/**
 * The undo plan's kind-neutral part (pure): one run's records -> what each object was before it, and the
 * steps that take it back; each kind's `undo` decides (docs/undo.md, "Undo, run by run").
 */
import type { Problem } from '../errors.js';
import type { Overrides } from '../importer/overrides.js';
import { held, type Source } from '../importer/source.js';
import type { TemplateCatalog } from '../schema/catalog.js';
import type { WritePayload } from './execute.js';
import type { JournalObject, JournalRecord, SafeImage } from './journal/records.js';
import { type JournalRecordReader, type RecordPlace, writeKey } from './journal/replay.js';
import { notOursReason } from './ownership.js';

/** A masked image, held or read again from the journal when it is needed. */
export type ImageSource = Source<SafeImage | undefined>;

/** The image of the intent record at `at` (a class: one shape for 100 000 of them). */
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
  readonly name: string;
  type: string;
  readonly firstOp: 'create' | 'update' | 'delete';
  readonly firstBefore: SafeImage | undefined;
  /** The last image the run wrote; undefined after a delete or in an old journal. */
  lastImage: ImageSource | undefined;
  /** Secrets the run's updates sent in clear (JSON pointers). */
  secretsSent: Set<string> | undefined;
  lastIndex: number;
  applied: boolean;
  /** An intent with no outcome: it may have been applied. */
  pending: boolean;
  /** The create was found by a look-up after its answer was lost (or never settled): maybe not ours. */
  inDoubt: boolean;
  /** Why it is provably someone else's: left, even with `--include-in-doubt`. */
  notOurs?: string;
  /** The id the run's create was answered with (or found under). */
  createdId?: string;
}

/** Per object, what run `run` did, newest first; with `reader`, images are read again when needed. */
export function createRunHistory(
  run: number,
  reader?: JournalRecordReader,
): {
  add(record: JournalRecord, index: number, at?: RecordPlace): void;
  finish(): History[];
} {
  const byKey = new Map<string, History>();
  // Per open intent, the object's history before it (a copy): what a `withdrawn` puts back, as replay does.
  const beforeIntent = new Map<string, { readonly attempt: number; readonly prior: History | undefined }>();
  const add = (record: JournalRecord, index: number, at?: RecordPlace): void => {
    if (record.kind !== 'intent' && record.kind !== 'outcome' && record.kind !== 'withdrawn') return;
    if ((record.run ?? 1) !== run) return;
    const key = writeKey(record.object, record.targetName);
    if (record.kind === 'withdrawn') {
      const open = beforeIntent.get(key);
      if (open === undefined || open.attempt !== record.attempt) return;
      beforeIntent.delete(key);
      if (open.prior === undefined) byKey.delete(key);
      else byKey.set(key, open.prior);
      return;
    }
    if (record.kind === 'intent') {
      let h = byKey.get(key);
      const prior = h && { ...h, secretsSent: h.secretsSent && new Set(h.secretsSent) };
      beforeIntent.set(key, { attempt: record.attempt, prior });
      // A write that settled without applying anything (failed, someone else's) counts for nothing.
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
    beforeIntent.delete(key);
    const h = byKey.get(key);
    if (h === undefined) return;
    h.pending = false;
    if (record.result !== 'failed' && record.result !== 'exists') h.applied = true;
    if (record.result === 'created') {
      h.inDoubt = record.via === 'lookup';
      h.createdId = record.targetId;
    }
    if (record.result === 'exists' && record.createdAt) h.notOurs = notOursReason(record.createdAt);
    h.lastIndex = index;
  };
  return {
    add,
    finish: () => {
      const histories = [...byKey.values()].filter((h) => h.applied || h.pending || h.notOurs !== undefined);
      // A create that never settled and is found now may be ours or someone else's.
      for (const h of histories) if (h.firstOp === 'create' && h.pending && !h.applied) h.inDoubt = true;
      byKey.clear();
      return histories.sort((a, b) => b.lastIndex - a.lastIndex);
    },
  };
}

/** What every undo step names: the object in the target. */
export interface StepBase {
  readonly object: JournalObject;
  readonly name: string;
  readonly type: string;
}

/** One step of an undo. */
export type UndoStep =
  /** The run created it and it still matches (a profile: deleted by the id it has now). */
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
      /** References by name, placed on the target's ids when sent (a profile's `dataSourceList`). */
      readonly refs?: unknown;
    })
  /** The run deleted it: POST of the before-image. */
  | (StepBase & {
      readonly kind: 're-create';
      readonly body: Readonly<Record<string, unknown>>;
      readonly image: SafeImage;
      readonly refs?: unknown;
    })
  | (StepBase & { readonly kind: 'left'; readonly reason: string })
  /** Already as before the run. */
  | (StepBase & { readonly kind: 'reverted' })
  /** Cannot be reverted as it stands (a secret missing, a template problem): a pre-flight problem. */
  | (StepBase & { readonly kind: 'invalid'; readonly problems: readonly Problem[] });

/** True for steps that send a request. */
export function isWritingStep(step: UndoStep): boolean {
  return step.kind === 'delete-created' || step.kind === 'put-back' || step.kind === 're-create';
}

/** A step that puts an object back or creates it again. */
export type RestoringStep = Extract<UndoStep, { kind: 'put-back' | 're-create' }>;

/** The target's objects of the kind a kind names (a profile's connections), for remapping by name. */
export interface ReferencedIds {
  readonly idByName: ReadonlyMap<string, string | undefined>;
  readonly nameById: ReadonlyMap<string, string>;
  /** Names this undo creates again (before the steps that name them). */
  readonly recreated: ReadonlySet<string>;
}

/** What planning a step needs besides the history and the object now. */
export interface UndoContext {
  readonly catalog: TemplateCatalog;
  readonly overrides: Overrides;
  /** This undo already put this connection back (its secrets need not be asked again). */
  readonly putBackDone: boolean;
  readonly includeInDoubt: boolean;
  readonly references?: ReferencedIds;
}

const IN_DOUBT_REASON =
  "its create was in doubt (the answer was lost and a look-up found the name): it may be someone else's; pass --include-in-doubt to delete it";

/**
 * The step of an object the run created: gone -> `reverted`; maybe not ours, or changed since (`changes`;
 * undefined: no usable image) -> `left`; else `delete-created`.
 */
export function planCreatedUndo(
  h: History,
  current: { readonly _id?: unknown } | undefined,
  context: Pick<UndoContext, 'includeInDoubt'>,
  step: <const T extends object>(own: T) => StepBase & T,
  changes: (created: SafeImage) => readonly { readonly path: string }[] | undefined,
): UndoStep {
  if (current === undefined) return step({ kind: 'reverted' });
  if (h.notOurs !== undefined) return step({ kind: 'left', reason: h.notOurs });
  // Deleted and created again under the same name since (by hand, another run): not the run's object.
  const currentId = typeof current._id === 'string' ? current._id : undefined;
  if (h.createdId !== undefined && currentId !== undefined && currentId !== h.createdId) {
    return step({
      kind: 'left',
      reason: `replaced since the import created it (the import's id ${h.createdId}, now ${currentId})`,
    });
  }
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

/**
 * Why an object the run updated or deleted, not as before the run now, is left (putting it back would
 * lose someone's later work): created again since, or changed since (`changes` from what the run wrote;
 * undefined: no image). Undefined: put it back.
 */
export function changedSinceReason(
  h: History,
  changes: (written: SafeImage) => readonly { readonly path: string }[] | undefined,
): string | undefined {
  if (h.firstOp === 'delete') {
    return 'created again since the import deleted it (putting the old one back would replace it)';
  }
  const written = h.lastImage?.load();
  const fields = written === undefined ? undefined : changes(written);
  if (fields === undefined || fields.length === 0) return undefined;
  const paths = fields.map((f) => f.path).join(', ');
  return `changed since the import updated it (${paths}; putting it back would lose that change)`;
}

/** A writing step's payload; `place` puts a restoring step's body on the target's ids now. */
export function loadUndoPayload(
  step: UndoStep,
  place: (step: RestoringStep) => Readonly<Record<string, unknown>> = (s) => s.body,
): WritePayload {
  if (step.kind === 'delete-created') return { before: step.before.load() ?? { name: step.name } };
  if (step.kind !== 're-create' && step.kind !== 'put-back')
    throw new Error(`not a writing step: ${step.kind}`);
  const body = place(step);
  if (step.kind === 're-create') return { body, image: step.image };
  return { body, image: step.image, secretsSent: step.secretsSent, before: step.current };
}
