/** Small writes in one 1 MiB buffer allocated once (one a line would add ~20 MB to a 100k snapshot's RSS). */
import type { FileHandle } from 'node:fs/promises';

const WRITE_BUFFER_BYTES = 1024 * 1024;

/** Writes (or copies) `data` before it resolves; it may not keep it. */
export type ByteSink = (data: Buffer) => Promise<void>;

/** Writes every byte to `fh` at its position. */
export function fileSink(fh: FileHandle): ByteSink {
  return async (data) => {
    let done = 0;
    while (done < data.length) {
      const { bytesWritten } = await fh.write(data, done, data.length - done);
      done += bytesWritten;
    }
  };
}

export function createBufferedWriter(sink: ByteSink): {
  /** Write `bytes` (copied: the caller may reuse its buffer). */
  write(bytes: Buffer): Promise<void>;
  /** Write `text` as UTF-8; returns its length in bytes. */
  writeText(text: string): Promise<number>;
  flush(): Promise<void>;
} {
  const buffer = Buffer.allocUnsafe(WRITE_BUFFER_BYTES);
  let size = 0;
  async function flush(): Promise<void> {
    if (size === 0) return;
    await sink(buffer.subarray(0, size));
    size = 0;
  }
  return {
    async write(bytes) {
      if (size + bytes.length > buffer.length) await flush();
      if (bytes.length > buffer.length) {
        await sink(bytes);
        return;
      }
      bytes.copy(buffer, size);
      size += bytes.length;
    },
    async writeText(text) {
      const length = Buffer.byteLength(text, 'utf8');
      if (size + length > buffer.length) await flush();
      if (length > buffer.length) await sink(Buffer.from(text, 'utf8'));
      else size += buffer.write(text, size, 'utf8');
      return length;
    },
    flush,
  };
}
