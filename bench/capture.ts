/** What benchmarks share: a writable that keeps what the CLI writes (its stdout or stderr). */
import { Writable } from 'node:stream';

/** A writable that keeps what is written, and a way to read it back as text. */
export function collect(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}
