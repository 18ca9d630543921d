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
 * with the error (a damaged file, a duplicate name, anything else); it takes `bytes` (the export's
 * body as it arrives, which it splits into the environment's connections, in any order, also before
 * `indexed`), answering with `took` (a count) as they are compared, or once with `unfollowed` when the
 * bytes are no JSON array of objects (the export's own parser then fails too); and `end`, which it
 * answers with `done` (the diff's result and the snapshot's scan profiles) or `failed`. Errors cross
 * the port as plain data and are rebuilt as the same classes here. The `took` answers bound what is
 * read and not compared yet (see {@link MAX_IN_FLIGHT}), before the snapshot is read whole and after.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { maskTokensIn } from '../diff/merged.js';
import { createStreamingDiff, type StreamingDiffResult } from '../diff/stream.js';
import type { DiffResult } from '../diff/types.js';
import { InputFileError, InterruptedError, UsageError } from '../errors.js';
import type { Connection } from '../model/connection.js';
import type { SnapshotScanProfile } from '../model/scan-profile.js';
import { packageRoot } from '../paths.js';
import { type EntryPlace, indexSnapshotNames, type PlacedSnapshot } from '../snapshot/read.js';
import { isEncryptedSnapshot } from '../snapshot/source.js';
import { JsonArrayElements, parseExportElement } from './array-elements.js';

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

/** The request as the side serves it: with when to tell what it compared (from the caps of {@link startSnapshotSide}). */
export interface ServedSnapshotSideRequest extends SnapshotSideRequest {
  /** `took` once at least this many more connections are compared, or this many more bytes done with. */
  readonly toldEvery: { readonly count: number; readonly bytes: number };
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

/**
 * The environment's side crosses as the export's bytes, chunk by chunk as they arrive (copied once and
 * transferred), and the side splits them into connections (`array-elements.ts`) and parses each with
 * `JSON.parse`: the export's thread, which parses the same bytes with the export's streaming parser,
 * then does nothing more per connection (its `JSON.stringify` and the structured clone of each
 * connection cost it 0.5 to 0.7 s of 100 000, measured in the tenth session). A connection that waits
 * for the snapshot's first pass waits as its text (a quarter of the parsed object's memory).
 */
type ToSide =
  | { readonly kind: 'bytes'; readonly bytes: Uint8Array }
  /** The export was read whole; `ids`: those the environment's scan profiles list, to be named. */
  | { readonly kind: 'end'; readonly ids: readonly string[] };

type FromSide =
  | { readonly kind: 'indexed' }
  /**
   * The bytes could not be split into connections, or one did not parse (a body the export's parser
   * refuses too, before its end): nothing more is compared, and the export is not held back any more.
   */
  | { readonly kind: 'unfollowed' }
  /**
   * `count` more connections compared; `bytes`: how many bytes of the export the side is done with in
   * all (neither waiting for the first pass nor part of an element still arriving).
   */
  | { readonly kind: 'took'; readonly count: number; readonly bytes: number }
  | { readonly kind: 'failed'; readonly error: PortError }
  | {
      readonly kind: 'done';
      /**
       * The diff's result as JSON text (JSON values and strings only): one string crosses faster than
       * its many small objects (100 000 uncomparable fields: 30 ms for the text against 200 ms cloned,
       * measured in the tenth session).
       */
      readonly result: string;
      readonly counts: { readonly from: number; readonly to: number };
      /** Type of each connection only in `from`. */
      readonly addedTypes: [string, string][];
      /** The name of each id asked for at `end` that an environment's connection has. */
      readonly names: [string, string][];
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
export function serveSnapshotSide(port: MessagePort, request: ServedSnapshotSideRequest): void {
  const secrets = new Map(request.secretFields.map(([type, keys]) => [type, new Set(keys)]));
  const none: ReadonlySet<string> = new Set();
  const differ = createStreamingDiff({
    ignoreFields: request.ignoreFields,
    secretFields: (type) => secrets.get(type) ?? none,
  });
  const snapshotFlag = request.flag;
  const environmentFlag = snapshotFlag === 'from' ? 'to' : 'from';
  const places = new Map<string, EntryPlace>();
  /** Connections handed over before the first pass reached their twins. */
  let waiting: Arrival[] = [];
  const elements = new JsonArrayElements();
  /** Why the export's bytes could not be followed, once they could not. */
  let unfollowed: string | undefined;
  /** The environment's connections' names by id (its scan profiles list ids). */
  const nameById = new Map<string, string>();
  /** Compared and not yet reported in a `took`. */
  let untold = 0;
  const { toldEvery } = request;
  /** Bytes of the export received, of connections waiting (as characters: about), and done with when last told. */
  let received = 0;
  let waitingChars = 0;
  let toldBytes = 0;
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
    if (message.kind === 'indexed' || message.kind === 'took' || message.kind === 'unfollowed') return;
    over = true;
    file?.file.close();
    port.close();
  };
  const fail = (error: unknown) => post({ kind: 'failed', error: toPortError(error) });

  /** The export's bytes cannot be followed: stop comparing, and stop holding the export back. */
  const unfollow = (why: string) => {
    if (unfollowed !== undefined) return;
    unfollowed = why;
    waiting = [];
    waitingChars = 0;
    post({ kind: 'unfollowed' });
  };
  /** An element of the export parsed, or undefined (and the export unfollowed) when it is no connection. */
  const parseElement = (text: string, index: number): Connection | undefined => {
    let value: unknown;
    try {
      value = parseExportElement(text);
    } catch {
      // Not JSON.parse's message: it quotes the element, whose values may be credentials.
      unfollow(`element ${index} does not parse as JSON`);
      return undefined;
    }
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Connection;
    unfollow(`element ${index} is not an object`);
    return undefined;
  };
  const placeOf = (name: unknown) => (typeof name === 'string' ? places.get(name) : undefined);
  /** Compare a connection with its twin read again at `place` (none: one the snapshot lacks). */
  const compare = (arrival: Arrival, entry: Connection, place: EntryPlace | undefined) => {
    if (place === undefined) {
      differ.add(environmentFlag, entry);
      return;
    }
    places.delete(arrival.name as string);
    const twin = (reading as PlacedSnapshot).reread(place);
    if (snapshotFlag === 'from') differ.pair(twin, entry, arrival.masks);
    else differ.pair(entry, twin, arrival.masks);
  };
  /** Tell what was compared, once enough more is (TOLD_EVERY, TOLD_BYTES): the export's thread handles fewer messages. */
  const tell = (compared: number) => {
    untold += compared;
    const done = received - waitingChars - elements.pendingBytes();
    if (untold >= toldEvery.count || done - toldBytes >= toldEvery.bytes) {
      post({ kind: 'took', count: untold, bytes: done });
      untold = 0;
      toldBytes = done;
    }
  };
  let elementsTaken = 0;
  /**
   * Parse and compare each connection split from the export. During the first pass, a connection
   * whose twin the pass has not reached waits for its end (a twin further on, or none), as its text;
   * the snapshot is in name order, so as the pass goes on more of what arrives is compared at once and
   * the export is held back less (on the seventh session's machine its thread waited 0.8 s of 6.3 s
   * for the pass when everything waited). Nothing is reported before the pass has checked the file whole.
   */
  const take = (split: readonly Buffer[]) => {
    let compared = 0;
    for (const bytes of split) {
      const text = bytes.toString('utf8');
      const entry = parseElement(text, elementsTaken++);
      if (entry === undefined) return;
      if (typeof entry._id === 'string') nameById.set(entry._id, entry.name);
      const arrival: Arrival = { name: entry.name, text, masks: maskTokensIn(bytes) };
      const place = placeOf(entry.name);
      if (file === undefined && place === undefined) {
        waiting.push(arrival);
        waitingChars += text.length;
        continue;
      }
      compare(arrival, entry, place);
      compared++;
    }
    tell(compared);
  };
  let askedIds: readonly string[] = [];
  const finish = () => {
    const indexed = file as NonNullable<typeof file>;
    for (const place of places.values())
      differ.add(snapshotFlag, indexed.file.reread(place), () => indexed.file.reread(place));
    const found = differ.finish();
    post({
      kind: 'done',
      result: JSON.stringify(found.result),
      counts: found.counts,
      addedTypes: found.result.added.map((name) => [name, found.typeOfAdded(name) ?? '']),
      names: askedIds.flatMap((id) => {
        const name = nameById.get(id);
        return name === undefined ? [] : [[id, name] as [string, string]];
      }),
      profiles: indexed.profiles,
    });
  };

  port.on('message', (message: ToSide) => {
    if (over) return;
    try {
      if (message.kind === 'bytes') {
        if (unfollowed !== undefined) return;
        const { bytes } = message;
        received += bytes.byteLength;
        const split = elements.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
        if (elements.broken !== undefined) unfollow(elements.broken);
        take(split);
      } else {
        ended = true;
        askedIds = message.ids;
        const notWhole = unfollowed === undefined ? elements.end() : undefined;
        if (notWhole !== undefined) unfollow(notWhole);
        // The export's own parser read it whole: the two disagree.
        if (unfollowed !== undefined)
          throw new Error(
            `the export was read whole, but the diff could not follow its bytes: ${unfollowed}`,
          );
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
      const waited = waiting;
      waiting = [];
      waitingChars = 0;
      for (const arrival of waited)
        compare(arrival, parseExportElement(arrival.text) as Connection, placeOf(arrival.name));
      tell(waited.length);
      if (ended) finish();
    })
    .catch(fail);
}

/** An exported connection as it arrived: its name, its text, and a bound on its masks (see `maskTokensIn`). */
interface Arrival {
  readonly name: unknown;
  readonly text: string;
  readonly masks: number | undefined;
}

/** The snapshot side as seen from the diff. */
export interface SnapshotSide {
  /** The next chunk of the export's body, as it arrives (before the connections in it are parsed here). */
  addBytes(chunk: Buffer): void;
  /**
   * One more of the environment's connections parsed here (its bytes were handed over before). Returns
   * a promise, to be awaited, only when {@link MAX_IN_FLIGHT} connections are read and not compared
   * yet, or {@link MAX_IN_FLIGHT_BYTES} bytes handed over are not done with (the snapshot is still
   * being read, or its rereads are slower than the export): the export is held back rather than piling
   * up in memory. The promise resolves once the side has caught up by half on both (or cannot follow
   * the bytes any more), and rejects if it fails.
   */
  read(): Promise<void> | undefined;
  /** Connections read and not compared yet. */
  inFlight(): number;
  /** Bytes of the export handed over and not done with yet (as the side last told). */
  inFlightBytes(): number;
  /** Resolves once the snapshot is read and checked whole; rejects with what was wrong with it. */
  readonly indexed: Promise<void>;
  /** Rejects when the side fails, before or after `indexed` (a line that changed on a reread, say); never resolves. */
  readonly failed: Promise<never>;
  /** The side's failure so far, if any. */
  failure(): Error | undefined;
  /**
   * After the last `read`: the diff of both sides, the snapshot's scan profiles, and the names of the
   * environment's connections whose ids are `ids` (its scan profiles list them).
   */
  finish(ids: readonly string[]): Promise<{
    readonly found: StreamingDiffResult;
    readonly profiles: SnapshotScanProfile[];
    /** The names of those of `ids` that an environment's connection has. */
    readonly names: ReadonlyMap<string, string>;
  }>;
  /**
   * Stop the side (its thread, if any); what still waits on it is rejected as interrupted. Safe after
   * `finish` and twice. After `finish` answered, the side's thread is ending on its own: not waited for.
   */
  close(): Promise<void>;
}

/**
 * The side tells what it compared (`took`) in counts of at least this many, or an eighth of the cap on
 * what is in flight when smaller (the export waits for half the cap: a count never told would hold it
 * forever): the export's thread handles 100 messages for 100 000 connections, not 2 000. The same for
 * bytes, against {@link MAX_IN_FLIGHT_BYTES}.
 */
const TOLD_EVERY = 1_000;
const TOLD_BYTES = 4 * 1024 * 1024;

/**
 * Bytes of the export handed over and not done with yet, at most (connections waiting for the
 * snapshot's first pass, and what has not been split yet): the bound on memory whatever the size of
 * a connection (a real one with certificates or many custom fields may be 10 KB), with
 * {@link MAX_IN_FLIGHT} for the count.
 */
export const MAX_IN_FLIGHT_BYTES = 64 * 1024 * 1024;

/**
 * Connections read and not compared yet, at most: the most that waits for the snapshot's first pass
 * (in the side, as their text: under 1 KB each for the generated ones, about 30 MB), or queues behind
 * rereads slower than the export (a snapshot over {@link HOLD_FOR_REREADS_BYTES} is read again line
 * by line). 10 000 when they crossed as objects (3 KB each): the export then waited for the pass.
 */
export const MAX_IN_FLIGHT = 40_000;

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
  maxInFlightBytes = MAX_IN_FLIGHT_BYTES,
): SnapshotSide {
  const size = statSync(request.path, { throwIfNoEntry: false })?.size ?? 0;
  const served: ServedSnapshotSideRequest = {
    ...request,
    toldEvery: {
      count: Math.max(1, Math.min(TOLD_EVERY, Math.floor(maxInFlight / 8))),
      bytes: Math.max(1, Math.min(TOLD_BYTES, Math.floor(maxInFlightBytes / 8))),
    },
  };
  let port: MessagePort | Worker;
  let stop: () => Promise<void>;
  // An encrypted snapshot is read on this thread, where the command's keys are (`snapshot/keys.ts`).
  if (size >= thresholdBytes && !isEncryptedSnapshot(request.path)) {
    const worker = new Worker(workerFile(), { workerData: served });
    port = worker;
    stop = async () => {
      await worker.terminate();
    };
  } else {
    const channel = new MessageChannel();
    serveSnapshotSide(channel.port2, served);
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
  let bytesSent = 0;
  let bytesTaken = 0;
  /** Within half of both caps: a waiting export goes on. */
  const caughtUpByHalf = () =>
    sent - taken <= maxInFlight / 2 && bytesSent - bytesTaken <= maxInFlightBytes / 2;
  /** The side cannot follow the bytes: the export is not held back any more (it fails on its own, or `finish` does). */
  let unfollowed = false;
  /** The export waits on this while the side catches up. */
  let caughtUp: Deferred<void> | undefined;
  port.on('message', (message: FromSide) => {
    if (message.kind === 'indexed') indexed.resolve();
    else if (message.kind === 'unfollowed') {
      unfollowed = true;
      caughtUp?.resolve();
      caughtUp = undefined;
    } else if (message.kind === 'took') {
      taken += message.count;
      bytesTaken = Math.max(bytesTaken, message.bytes);
      if (caughtUp !== undefined && caughtUpByHalf()) {
        caughtUp.resolve();
        caughtUp = undefined;
      }
    } else if (message.kind === 'failed') settleAll(fromPortError(message.error));
    else {
      answered = true;
      // Everything read was compared (what was not told yet too).
      taken = sent;
      bytesTaken = bytesSent;
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

  const send = (message: ToSide, transfer?: ArrayBuffer[]) => port.postMessage(message, transfer);
  return {
    addBytes(chunk) {
      // A copy of its own, transferred: the chunk may be a view of a larger buffer, all of which a clone would copy.
      const bytes = new Uint8Array(chunk.length);
      bytes.set(chunk);
      bytesSent += bytes.length;
      send({ kind: 'bytes', bytes }, [bytes.buffer]);
    },
    read() {
      sent++;
      if (unfollowed || (sent - taken < maxInFlight && bytesSent - bytesTaken < maxInFlightBytes))
        return undefined;
      caughtUp ??= deferred<void>();
      // A failure of the side ends the wait too (and stops the export).
      return Promise.race([caughtUp.promise, failed.promise]);
    },
    inFlight: () => sent - taken,
    inFlightBytes: () => bytesSent - bytesTaken,
    indexed: indexed.promise,
    failed: failed.promise,
    failure: () => failure,
    async finish(ids) {
      send({ kind: 'end', ids });
      const answer = await done.promise;
      const types = new Map(answer.addedTypes);
      return {
        found: {
          result: JSON.parse(answer.result) as DiffResult,
          counts: answer.counts,
          typeOfAdded: (name) => types.get(name),
        },
        profiles: answer.profiles,
        names: new Map(answer.names),
      };
    },
    async close() {
      if (answered && failure === undefined) {
        // Done: the side released its file and closed its port, and its thread is ending on its own
        // (the teardown of its heap, 30 to 120 ms, goes on while the result is printed).
        stop().catch(() => undefined);
        return;
      }
      settleAll(new InterruptedError('Interrupted while the snapshot was read'));
      await stop();
    },
  };
}
