/**
 * Before-images kept out of memory. A converging import journals, with each update and delete, the
 * target's connection as it was (secrets masked), which it sees only when the target is listed: for
 * 100 000 updates those images were about 100 MB of the heap until each was sent. They are written
 * instead to a file of this run's own beside the journal (`<journal>.<pid>-<random>.images.tmp`, mode
 * 0600, created exclusively), in blocks, read back when the step is sent, and removed before the
 * journal's lock is released. Files that runs killed left are removed by the next run, under the lock.
 * A dry run, which sends nothing, keeps none.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { FileWriteError } from '../errors.js';
import { scrub } from '../secrets.js';
import type { SafeImage } from './journal.js';
import type { ImageSource } from './plan.js';

/** Where images go as they are kept. */
export interface ImageStore {
  keep(image: SafeImage): ImageSource;
  /** Release what is held (the file is removed). */
  close(): void;
}

/** A dry run: images are not kept, and loading one is a bug. */
export const DROP_IMAGES: ImageStore = {
  keep: () => DROPPED,
  close: () => undefined,
};

const DROPPED: ImageSource = {
  load: () => {
    throw new Error(
      'a before-image was loaded that was not kept (a dry run keeps none; nor does a closed store)',
    );
  },
};

/** Bytes gathered before a write to the file (images are about 1 KB each). */
const BLOCK_BYTES = 1024 * 1024;

/** An image written to the spill file: where its JSON text is. A class: 100 000 of them share one shape. */
class SpilledImage implements ImageSource {
  constructor(
    private readonly spill: ImageSpill,
    private readonly offset: number,
    private readonly length: number,
  ) {}

  load(): SafeImage {
    return this.spill.read(this.offset, this.length);
  }
}

/** The spill file: appended in blocks, read back by offset. */
class ImageSpill implements ImageStore {
  private fd: number | undefined;
  private readonly pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes written to the file. */
  private written = 0;
  private closed = false;

  constructor(private readonly path: string) {}

  keep(image: SafeImage): ImageSource {
    // Closed (the run is ending, a listing still draining): nothing is kept, nothing will be sent.
    if (this.closed) return DROPPED;
    // Scrubbed as the journal's lines are: a value the service echoed in clear stays out of the file too.
    const bytes = Buffer.from(scrub(JSON.stringify(image)), 'utf8');
    const offset = this.written + this.pendingBytes;
    this.pending.push(bytes);
    this.pendingBytes += bytes.length;
    if (this.pendingBytes >= BLOCK_BYTES) this.flush();
    return new SpilledImage(this, offset, bytes.length);
  }

  read(offset: number, length: number): SafeImage {
    if (offset >= this.written) this.flush();
    const bytes = Buffer.allocUnsafe(length);
    let done = 0;
    try {
      while (done < length) {
        const n = readSync(this.fd as number, bytes, done, length - done, offset + done);
        if (n === 0) throw Object.assign(new Error('the file ended early'), { code: 'ESHORT' });
        done += n;
      }
    } catch (error) {
      throw this.fileError('read back', error);
    }
    return JSON.parse(bytes.toString('utf8')) as SafeImage;
  }

  /** Remove the file; never throws (a cleanup must not hide how the run ended). Idempotent. */
  close(): void {
    this.closed = true;
    this.pending.length = 0;
    this.pendingBytes = 0;
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    try {
      closeSync(fd);
    } catch {
      // already closed: nothing to do
    }
    try {
      unlinkSync(this.path);
    } catch {
      // removed already (a next run's sweep, a cleaner of temporary files)
    }
  }

  private flush(): void {
    if (this.pendingBytes === 0 || this.closed) return;
    const block = Buffer.concat(this.pending, this.pendingBytes);
    try {
      // Exclusive: a name of this run's own, never a file (or link) someone else made.
      this.fd ??= openSync(this.path, 'wx+', 0o600);
      let done = 0;
      while (done < block.length)
        done += writeSync(this.fd, block, done, block.length - done, this.written + done);
    } catch (error) {
      throw this.fileError('write', error);
    }
    this.written += block.length;
    this.pending.length = 0;
    this.pendingBytes = 0;
  }

  private fileError(what: string, error: unknown): FileWriteError {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    return new FileWriteError(this.path, `cannot ${what} the before-images of the run (${code})`, {
      hint: 'Free disk space or fix permissions beside the journal, then re-run',
      cause: error,
    });
  }
}

/** An images file of a run of the journal at `journalPath`: `<journal>.<pid>-<8 hex>.images.tmp`. */
function isImagesFileOf(journalPath: string, name: string): boolean {
  const prefix = `${basename(journalPath)}.`;
  return (
    name.startsWith(prefix) &&
    name.endsWith(IMAGES_SUFFIX) &&
    /^\d+-[0-9a-f]{8}$/.test(name.slice(prefix.length, name.length - IMAGES_SUFFIX.length))
  );
}

const IMAGES_SUFFIX = '.images.tmp';

/**
 * Before-images of a run of the journal at `journalPath`, written to a file of this run's own beside it
 * (created when the first block is full or an image is read). Call while the journal's lock is held.
 */
export function spillImages(journalPath: string): ImageStore {
  return new ImageSpill(`${journalPath}.${process.pid}-${randomBytes(4).toString('hex')}${IMAGES_SUFFIX}`);
}

/**
 * Remove the images files earlier runs of this journal left (killed before they could): call once the
 * lock is held, when no other run of it can be using one. Never throws.
 */
export function removeLeftImages(journalPath: string): void {
  let names: string[];
  try {
    names = readdirSync(dirname(journalPath));
  } catch {
    return;
  }
  for (const name of names) {
    if (!isImagesFileOf(journalPath, name)) continue;
    try {
      unlinkSync(join(dirname(journalPath), name));
    } catch {
      // gone meanwhile, or not ours to remove: left
    }
  }
}
