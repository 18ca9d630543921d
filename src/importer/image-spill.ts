/**
 * Before-images kept out of memory. A converging import journals, with each update and delete, the
 * target's connection as it was (secrets masked), which it sees only when the target is listed: for
 * 100 000 updates those images were about 100 MB of the heap until each was sent. They are written
 * instead to a file beside the journal (mode 0600, removed when the run ends), in blocks, and read
 * back when the step is sent. A dry run, which sends nothing, keeps none.
 */
import { closeSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import { FileWriteError } from '../errors.js';
import type { SafeImage } from './journal.js';
import { heldImage, type ImageSource } from './plan.js';

/** Where images go as they are kept. */
export interface ImageStore {
  keep(image: SafeImage): ImageSource;
  /** Release what is held (the file is removed). */
  close(): void;
}

/** Images kept in memory. */
export const HOLD_IMAGES: ImageStore = { keep: heldImage, close: () => undefined };

/** A dry run: images are not kept, and loading one is a bug. */
export const DROP_IMAGES: ImageStore = {
  keep: () => DROPPED,
  close: () => undefined,
};

const DROPPED: ImageSource = {
  load: () => {
    throw new Error('a before-image was loaded in a dry run (none is kept)');
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

  constructor(private readonly path: string) {}

  keep(image: SafeImage): ImageSource {
    const bytes = Buffer.from(JSON.stringify(image), 'utf8');
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
    while (done < length) {
      const n = readSync(this.fd as number, bytes, done, length - done, offset + done);
      if (n === 0) throw new Error(`${this.path}: ended at ${offset + done} of ${offset + length}`);
      done += n;
    }
    return JSON.parse(bytes.toString('utf8')) as SafeImage;
  }

  close(): void {
    this.pending.length = 0;
    this.pendingBytes = 0;
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
    unlinkSync(this.path);
  }

  private flush(): void {
    if (this.pendingBytes === 0) return;
    const block = Buffer.concat(this.pending, this.pendingBytes);
    try {
      // 'w+': a file left by a run that was killed is started again.
      this.fd ??= openSync(this.path, 'w+', 0o600);
      let done = 0;
      while (done < block.length)
        done += writeSync(this.fd, block, done, block.length - done, this.written + done);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'error';
      throw new FileWriteError(this.path, `cannot write the before-images of the run (${code})`, {
        hint: 'Free disk space or fix permissions beside the journal, then re-run',
        cause: error,
      });
    }
    this.written += block.length;
    this.pending.length = 0;
    this.pendingBytes = 0;
  }
}

/** Before-images written to `path` (created when the first block is full or an image is read). */
export function spillImages(path: string): ImageStore {
  return new ImageSpill(path);
}
