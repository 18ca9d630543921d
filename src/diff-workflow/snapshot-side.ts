/**
 * The snapshot side of a diff against an environment, served over a message port. The snapshot is read
 * whole and checked (keeping per connection its place in the file), then each of the environment's
 * connections handed over is compared with its twin read again from the file; the snapshot's
 * connections the environment lacks are read again at the end. For a large snapshot the side runs in
 * a worker thread: reading, checking and comparing then take the other core while this thread reads
 * the export (which keeps its core busy parsing); a small one is served on this thread through a
 * `MessageChannel`, by the same code (a thread costs more to start than such a file takes to read).
 *
 * The protocol: the side posts `indexed` once the snapshot is read and checked whole, or `failed`
 * with the error (a damaged file, a duplicate name, anything else); it takes `entries` (the
 * environment's connections, in batches, in any order, also before `indexed`), answering with `took`
 * (a count) as they are compared, and `end`, which it answers with `done` (the diff's
 * result and the snapshot's scan profiles) or `failed`. Errors cross the port as plain data and are
 * rebuilt as the same classes here. The `took` answers bound what is handed over and not compared yet
 * (see {@link MAX_IN_FLIGHT}), before the snapshot is read whole and after.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { createStreamingDiff, type StreamingDiffResult } from '../diff/stream.js';
import type { DiffResult } from '../diff/types.js';
import { InputFileError, InterruptedError, UsageError } from '../errors.js';
import type { Connection } from '../model/connection.js';
import type { SnapshotScanProfile } from '../model/scan-profile.js';
import { packageRoot } from '../paths.js';
import { type EntryPlace, indexSnapshotNames, type PlacedSnapshot } from '../snapshot/read.js';

/**
 * A snapshot up to this size is held in memory for the rereads (a 100 000-connection snapshot is
 * 76 MB): a read per connection cost 0.55 s of the 100 000, on the core the export shares. A larger
 * one is read line by line, so what is held stays bounded whatever the size of the environment.
 */
export const HOLD_FOR_REREADS_BYTES = 128 * 1024 * 1024;

/** What the side needs: plain data (it may cross to a worker thread). */
export interface SnapshotSideRequest {
  readonly path: string;
  /** How messages name the file (as the user typed it). */
  readonly label: string;
  /** Which side of the diff the snapshot is. */
  readonly flag: 'from' | 'to';
  readonly ignoreFields: readonly string[];
  /** `x-secret` keys by connection type (the template catalog's, as a table). */
  readonly secretFields: readonly (readonly [string, readonly string[]])[];
  /** Held in memory as read up to this size (default {@link HOLD_FOR_REREADS_BYTES}; tests read larger files' way with 0). */
  readonly holdForRereadsUpTo?: number;
}

/** An error as it crosses the port. */
type PortError =
  | {
      readonly kind: 'input';
      readonly file: string;
      readonly line: number | undefined;
      readonly message: string;
      readonly hint: string | undefined;
    }
  | { readonly kind: 'usage'; readonly message: string; readonly hint: string | undefined }
  | { readonly kind: 'interrupted'; readonly message: string }
  | { readonly kind: 'bug'; readonly message: string; readonly stack: string | undefined };

type ToSide = { readonly kind: 'entries'; readonly entries: Connection[] } | { readonly kind: 'end' };

type FromSide =
  | { readonly kind: 'indexed' }
  /** A batch of `count` connections compared. */
  | { readonly kind: 'took'; readonly count: number }
  | { readonly kind: 'failed'; readonly error: PortError }
  | {
      readonly kind: 'done';
      readonly result: DiffResult;
      readonly counts: { readonly from: number; readonly to: number };
      /** Type of each connection only in `from`. */
      readonly addedTypes: [string, string][];
      readonly profiles: SnapshotScanProfile[];
    };

function toPortError(error: unknown): PortError {
  if (error instanceof InputFileError) {
    const prefix = error.line === undefined ? `${error.file}: ` : `${error.file}:${error.line}: `;
    const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    return { kind: 'input', file: error.file, line: error.line, message, hint: error.hint };
  }
  if (error instanceof UsageError) return { kind: 'usage', message: error.message, hint: error.hint };
  if (error instanceof InterruptedError) return { kind: 'interrupted', message: error.message };
  const e = error instanceof Error ? error : new Error(String(error));
  return { kind: 'bug', message: e.message, stack: e.stack };
}

function fromPortError(error: PortError): Error {
  switch (error.kind) {
    case 'input':
      return new InputFileError(error.file, error.line, error.message, optionsOf(error.hint));
    case 'usage':
      return new UsageError(error.message, optionsOf(error.hint));
    case 'interrupted':
      return new InterruptedError(error.message);
    default: {
      const rebuilt = new Error(error.message);
      if (error.stack !== undefined) rebuilt.stack = error.stack;
      return rebuilt;
    }
  }
}

function optionsOf(hint: string | undefined): { hint?: string } {
  return hint === undefined ? {} : { hint };
}

/**
 * Serve the snapshot side on `port` (in a worker thread, or on this one): see the module comment.
 * The port is closed once `done` or `failed` is posted.
 */
export function serveSnapshotSide(port: MessagePort, request: SnapshotSideRequest): void {
  const secrets = new Map(request.secretFields.map(([type, keys]) => [type, new Set(keys)]));
  const none: ReadonlySet<string> = new Set();
  const differ = createStreamingDiff({
    ignoreFields: request.ignoreFields,
    secretFields: (type) => secrets.get(type) ?? none,
  });
  const snapshotFlag = request.flag;
  const environmentFlag = snapshotFlag === 'from' ? 'to' : 'from';
  const places = new Map<string, EntryPlace>();
  const waiting: Connection[][] = [];
  /** The snapshot once its first pass has checked it whole. */
  let file: Awaited<ReturnType<typeof indexSnapshotNames>> | undefined;
  /** The snapshot as its first pass goes (the same one as `file.file`): a line passed can be read again. */
  let reading: PlacedSnapshot | undefined;
  let ended = false;
  let over = false;

  const post = (message: FromSide): void => {
    if (over) return;
    try {
      port.postMessage(message);
    } catch (error) {
      // A message that cannot cross (it is plain data: a bug): its failure is posted instead.
      if (message.kind !== 'failed') {
        post({ kind: 'failed', error: toPortError(error) });
        return;
      }
    }
    if (message.kind === 'indexed' || message.kind === 'took') return;
    over = true;
    file?.file.close();
    port.close();
  };
  const fail = (error: unknown) => post({ kind: 'failed', error: toPortError(error) });

  /**
   * Compare each connection with its twin read again. During the first pass, a connection whose twin
   * the pass has not reached waits for its end (a twin further on, or none); the snapshot is in name
   * order, so as the pass goes on more of what arrives is compared at once and the export is held back
   * less (on the seventh session's machine its thread waited 0.8 s of 6.3 s for the pass when
   * everything waited). Nothing is reported before the pass has checked the file whole.
   */
  const take = (entries: readonly Connection[]) => {
    const later: Connection[] = [];
    for (const entry of entries) {
      const place = places.get(entry.name);
      if (place === undefined && file === undefined) {
        later.push(entry);
        continue;
      }
      if (place !== undefined) {
        places.delete(entry.name);
        differ.add(snapshotFlag, (reading as PlacedSnapshot).reread(place));
      }
      differ.add(environmentFlag, entry);
    }
    if (later.length > 0) waiting.push(later);
    const compared = entries.length - later.length;
    if (compared > 0) post({ kind: 'took', count: compared });
  };
  const finish = () => {
    const indexed = file as NonNullable<typeof file>;
    for (const place of places.values())
      differ.add(snapshotFlag, indexed.file.reread(place), () => indexed.file.reread(place));
    const found = differ.finish();
    post({
      kind: 'done',
      result: found.result,
      counts: found.counts,
      addedTypes: found.result.added.map((name) => [name, found.typeOfAdded(name) ?? '']),
      profiles: indexed.profiles,
    });
  };

  port.on('message', (message: ToSide) => {
    if (over) return;
    try {
      if (message.kind === 'entries') {
        take(message.entries);
      } else {
        ended = true;
        if (file !== undefined) finish();
      }
    } catch (error) {
      fail(error);
    }
  });

  // The other end closed (the diff failed or was stopped): stop reading, release the file.
  const stopped = new AbortController();
  port.on('close', () => {
    over = true;
    stopped.abort();
    file?.file.close();
  });

  indexSnapshotNames(
    request.path,
    ({ name, place }, snapshot) => {
      places.set(name, place);
      reading = snapshot;
    },
    {
      label: request.label,
      signal: stopped.signal,
      // Every connection the environment also holds is read again: from memory, not a read each.
      holdForRereadsUpTo: request.holdForRereadsUpTo ?? HOLD_FOR_REREADS_BYTES,
    },
  )
    .then((indexed) => {
      if (over) {
        indexed.file.close();
        return;
      }
      file = indexed;
      post({ kind: 'indexed' });
      for (const entries of waiting.splice(0)) take(entries);
      if (ended) finish();
    })
    .catch(fail);
}

/** The snapshot side as seen from the diff. */
export interface SnapshotSide {
  /**
   * Hand an environment's connection over (sent in batches). Returns a promise, to be awaited, only
   * when {@link MAX_IN_FLIGHT} connections are handed over and not compared yet (the snapshot is still
   * being read, or its rereads are slower than the export): the export is held back rather than piling
   * up in memory. The promise resolves once the side has caught up by half, and rejects if it fails.
   */
  add(entry: Connection): Promise<void> | undefined;
  /** Connections handed over and not compared yet. */
  inFlight(): number;
  /** Resolves once the snapshot is read and checked whole; rejects with what was wrong with it. */
  readonly indexed: Promise<void>;
  /** Rejects when the side fails, before or after `indexed` (a line that changed on a reread, say); never resolves. */
  readonly failed: Promise<never>;
  /** The side's failure so far, if any. */
  failure(): Error | undefined;
  /** After the last `add`: the diff of both sides, and the snapshot's scan profiles. */
  finish(): Promise<{ readonly found: StreamingDiffResult; readonly profiles: SnapshotScanProfile[] }>;
  /**
   * Stop the side (its thread, if any); what still waits on it is rejected as interrupted. Safe after
   * `finish` and twice.
   */
  close(): Promise<void>;
}

/** Environment connections per message. */
const BATCH = 50;

/**
 * Connections handed over and not compared yet, at most (at about 3 KB each, 30 MB): the most that
 * waits for the snapshot's first pass, or queues behind rereads slower than the export (a snapshot
 * over {@link HOLD_FOR_REREADS_BYTES} is read again line by line).
 */
export const MAX_IN_FLIGHT = 10_000;

/**
 * A snapshot at least this large is served by a worker thread: about 10 000 connections, read in
 * about 50 ms, where a thread takes a few tens of ms to start.
 */
export const WORKER_THRESHOLD_BYTES = 8 * 1024 * 1024;

/**
 * Where the compiled worker is (under vitest the sources are TypeScript: the build's copy serves). A
 * build older than these sources is refused: its side may speak an older protocol (one that never
 * answers `took` would leave the export waiting).
 */
function workerFile(): string {
  const here = fileURLToPath(import.meta.url);
  if (!here.endsWith('.ts')) return join(here, '..', 'snapshot-side-worker.js');
  const built = join(packageRoot(), 'dist', 'src', 'diff-workflow', 'snapshot-side-worker.js');
  const builtSide = join(packageRoot(), 'dist', 'src', 'diff-workflow', 'snapshot-side.js');
  if (!existsSync(built) || !existsSync(builtSide))
    throw new Error(`the snapshot side worker is not built (${built}): run npm run build`);
  if (statSync(builtSide).mtimeMs < statSync(here).mtimeMs)
    throw new Error(`the snapshot side worker is older than its source (${builtSide}): run npm run build`);
  return built;
}

/** A promise with its settle functions (`Promise.withResolvers`, from Node 22); a rejection is observed. */
interface Deferred<T> {
  readonly promise: Promise<T>;
  readonly resolve: (value: T) => void;
  readonly reject: (error: Error) => void;
}

function deferred<T>(): Deferred<T> {
  let resolve: (value: T) => void = () => undefined;
  let reject: (error: Error) => void = () => undefined;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/**
 * Start the snapshot side: in a worker thread when the file holds at least `thresholdBytes`
 * (default {@link WORKER_THRESHOLD_BYTES}), else on this thread.
 */
export function startSnapshotSide(
  request: SnapshotSideRequest,
  thresholdBytes = WORKER_THRESHOLD_BYTES,
  maxInFlight = MAX_IN_FLIGHT,
): SnapshotSide {
  const size = statSync(request.path, { throwIfNoEntry: false })?.size ?? 0;
  let port: MessagePort | Worker;
  let stop: () => Promise<void>;
  if (size >= thresholdBytes) {
    const worker = new Worker(workerFile(), { workerData: request });
    port = worker;
    stop = async () => {
      await worker.terminate();
    };
  } else {
    const channel = new MessageChannel();
    serveSnapshotSide(channel.port2, request);
    port = channel.port1;
    stop = async () => {
      channel.port1.close();
    };
  }

  const indexed = deferred<void>();
  const done = deferred<Extract<FromSide, { kind: 'done' }>>();
  const failed = deferred<never>();
  let failure: Error | undefined;
  let answered = false;
  const settleAll = (error: Error) => {
    if (answered) return;
    answered = true;
    failure = error;
    indexed.reject(error);
    done.reject(error);
    failed.reject(error);
  };

  let sent = 0;
  let taken = 0;
  /** The export waits on this while the side catches up. */
  let caughtUp: Deferred<void> | undefined;
  port.on('message', (message: FromSide) => {
    if (message.kind === 'indexed') indexed.resolve();
    else if (message.kind === 'took') {
      taken += message.count;
      if (caughtUp !== undefined && sent - taken <= maxInFlight / 2) {
        caughtUp.resolve();
        caughtUp = undefined;
      }
    } else if (message.kind === 'failed') settleAll(fromPortError(message.error));
    else {
      answered = true;
      indexed.resolve();
      done.resolve(message);
    }
  });
  port.on('messageerror', (error: unknown) =>
    settleAll(error instanceof Error ? error : new Error(String(error))),
  );
  port.on('error', (error: unknown) => settleAll(error instanceof Error ? error : new Error(String(error))));
  // Stopped before its answer (anything it posted before arrives first): a bug of the side.
  if (port instanceof Worker)
    port.on('exit', (code) => settleAll(new Error(`the snapshot side worker stopped (exit ${code})`)));
  else port.on('close', () => settleAll(new Error('the snapshot side stopped before it answered')));

  let batch: Connection[] = [];
  const send = (message: ToSide) => port.postMessage(message);
  return {
    add(entry) {
      batch.push(entry);
      if (batch.length < BATCH) return undefined;
      send({ kind: 'entries', entries: batch });
      sent += batch.length;
      batch = [];
      if (sent - taken < maxInFlight) return undefined;
      caughtUp ??= deferred<void>();
      // A failure of the side ends the wait too (and stops the export).
      return Promise.race([caughtUp.promise, failed.promise]);
    },
    inFlight: () => sent - taken + batch.length,
    indexed: indexed.promise,
    failed: failed.promise,
    failure: () => failure,
    async finish() {
      if (batch.length > 0) send({ kind: 'entries', entries: batch });
      sent += batch.length;
      batch = [];
      send({ kind: 'end' });
      const answer = await done.promise;
      const types = new Map(answer.addedTypes);
      return {
        found: { result: answer.result, counts: answer.counts, typeOfAdded: (name) => types.get(name) },
        profiles: answer.profiles,
      };
    },
    async close() {
      settleAll(new InterruptedError('Interrupted while the snapshot was read'));
      await stop();
    },
  };
}
