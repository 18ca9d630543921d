/** Reading the start of a streamed body without losing it, and reading a short (error) body whole. */
import { Readable } from 'node:stream';

/** Read an entire (error) stream into text, at most `limit` bytes kept. */
export async function readStreamText(stream: Readable, limit = 64 * 1024): Promise<string> {
  return (await readStreamCapped(stream, limit, 'keep-start')).toString('utf8').slice(0, limit);
}

/** The first non-blank byte (undefined at the end) and a stream that still holds it. */
export async function peekFirstByte(
  stream: Readable,
): Promise<{ stream: Readable; first: string | undefined }> {
  const seen: Buffer[] = [];
  const iterator = stream[Symbol.asyncIterator]();
  let first: string | undefined;
  for (;;) {
    const next = (await iterator.next()) as IteratorResult<Buffer | string>;
    if (next.done) break;
    const buf = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value);
    seen.push(buf);
    const text = buf.toString('utf8').trimStart();
    if (text !== '') {
      first = text[0];
      break;
    }
  }
  async function* again(): AsyncGenerator<Buffer> {
    yield* seen;
    yield* iterator as AsyncIterableIterator<Buffer>;
  }
  return { stream: Readable.from(again(), { objectMode: false }), first };
}

/** A buffered body grew past its cap (decoded bytes); the stream was destroyed. */
export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`the answer is larger than ${limit} bytes`);
  }
}

/**
 * A whole stream in one buffer of at most `maxBytes`. Past that, `fail`: destroyed, {@link BodyTooLarge};
 * `keep-start`: the rest read and dropped (an error body, whose start says what went wrong).
 */
export async function readStreamCapped(
  stream: Readable,
  maxBytes: number,
  over: 'fail' | 'keep-start' = 'fail',
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    if (size + buf.length > maxBytes && over === 'fail') {
      stream.destroy();
      throw new BodyTooLarge(maxBytes);
    }
    if (size < maxBytes) chunks.push(buf);
    size += buf.length;
  }
  return Buffer.concat(chunks);
}
