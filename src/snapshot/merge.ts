/**
 * Two snapshots read side by side in name order (a merge join) holding only each one's current line. Byte-equal
 * lines (most of two exports of one environment) are parsed once, as one `same` call; both are checked whole.
 */
import { compareNames } from '../connections/match.js';
import type { Connection } from '../model/connection.js';
import type { SnapshotScanProfile } from '../model/scan-profile.js';
import { type RawLine, readLineBatches } from './lines.js';
import { SnapshotParser, type VerifiedSnapshot } from './parser.js';
import type { ReadSnapshotOptions } from './read.js';

/** What a merge join hands each name to (a method call per name: no object made per line). */
export interface MergeSink {
  /** Byte-equal lines on both sides (`line` is valid during the call only). */
  same(entry: Connection, line: Buffer): void;
  /** The name on both sides, in lines that differ. */
  both(from: Connection, to: Connection): void;
  only(side: 'from' | 'to', entry: Connection): void;
}

export interface MergedFile {
  readonly path: string;
  readonly label?: string;
}

/** One file as read whole by {@link mergeSnapshots}. */
export interface MergedSide {
  readonly verified: VerifiedSnapshot;
  readonly profiles: SnapshotScanProfile[];
}

/** The reader's options but the label (one per file). */
export type MergeOptions = Omit<ReadSnapshotOptions, 'label'>;

/** Two 76 MB files merge in 0.88 s with 256 KiB chunks, 0.97 s with the reader's 64 KiB. */
export const MERGE_CHUNK_SIZE = 256 * 1024;

/** One file's place in the join: the batch of lines read, and the connection waiting for its twin. */
class Cursor {
  readonly parser: SnapshotParser;
  readonly profiles: SnapshotScanProfile[] = [];
  waiting: Connection | undefined;
  private readonly batches: AsyncGenerator<RawLine[]>;
  private batch: RawLine[] = [];
  private index = 0;
  private ended = false;

  constructor(file: MergedFile, options: MergeOptions) {
    const label = file.label ?? file.path;
    this.parser = new SnapshotParser(file.path, label);
    this.batches = readLineBatches(file.path, {
      ...options,
      chunkSize: options.chunkSize ?? MERGE_CHUNK_SIZE,
      label,
    });
  }

  /** True when the next line must be awaited before anything else can be decided. */
  get mustRead(): boolean {
    return this.waiting === undefined && !this.ended && this.index >= this.batch.length;
  }

  async read(): Promise<void> {
    const next = await this.batches.next();
    if (next.done === true) this.ended = true;
    else {
      this.batch = next.value;
      this.index = 0;
    }
  }

  peek(): RawLine | undefined {
    return this.index < this.batch.length ? this.batch[this.index] : undefined;
  }

  /** Push the next line (`parsed`: its value, from byte-equal text); returns a connection it holds. */
  take(parsed?: unknown): Connection | undefined {
    const raw = this.batch[this.index++] as RawLine;
    const line = this.parser.push(raw, parsed);
    if (line?.kind === 'scan-profile') this.profiles.push(line.profile);
    return line?.kind === 'connection' ? line.entry : undefined;
  }

  /** Take the header line (none: `finish` says the file is empty). */
  async takeHeader(): Promise<void> {
    while (!this.parser.headerRead) {
      if (this.mustRead) await this.read();
      if (this.peek() === undefined) return;
      this.take();
    }
  }

  finish(): MergedSide {
    return { verified: this.parser.finish(), profiles: this.profiles };
  }

  async close(): Promise<void> {
    await this.batches.return(undefined);
  }
}

/** Hand each name of `from` and `to` to `sink`, trailers checked last: trust the names once this resolves. */
export async function mergeSnapshots(
  from: MergedFile,
  to: MergedFile,
  sink: MergeSink,
  options: MergeOptions = {},
): Promise<{ readonly from: MergedSide; readonly to: MergedSide }> {
  const a = new Cursor(from, options);
  const b = new Cursor(to, options);
  try {
    await a.takeHeader();
    await b.takeHeader();
    // An empty file fails now, not after the other is read.
    if (!a.parser.headerRead) a.finish();
    if (!b.parser.headerRead) b.finish();
    for (;;) {
      if (a.mustRead) await a.read();
      if (b.mustRead) await b.read();
      if (a.waiting === undefined && b.waiting === undefined) {
        const rawA = a.peek();
        const rawB = b.peek();
        if (rawA !== undefined && rawB !== undefined && rawA.bytes.equals(rawB.bytes)) {
          const entry = a.take();
          if (entry === undefined) continue; // a profile line or the trailer: B's twin line is taken on its own
          const twin = b.take(entry);
          if (twin === entry) sink.same(entry, rawA.bytes);
          else {
            // B's parser placed the line otherwise (it holds no connection there): a plain join.
            a.waiting = entry;
            b.waiting = twin;
          }
          continue;
        }
      }
      if (a.waiting === undefined && a.peek() !== undefined) {
        a.waiting = a.take();
        continue;
      }
      if (b.waiting === undefined && b.peek() !== undefined) {
        b.waiting = b.take();
        continue;
      }
      if (a.mustRead || b.mustRead) continue;
      // Each side has a connection waiting, or is read to its end.
      const x = a.waiting;
      const y = b.waiting;
      if (x === undefined && y === undefined) break;
      const order = x === undefined ? 1 : y === undefined ? -1 : compareNames(x.name, y.name);
      if (order < 0) {
        sink.only('from', x as Connection);
        a.waiting = undefined;
      } else if (order > 0) {
        sink.only('to', y as Connection);
        b.waiting = undefined;
      } else {
        sink.both(x as Connection, y as Connection);
        a.waiting = undefined;
        b.waiting = undefined;
      }
    }
    return { from: a.finish(), to: b.finish() };
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}
