/**
 * The spill file of an encrypted export: AES-256-CTR under a key of this write alone, held in memory, so
 * no connection is on disk in the clear and any run of lines deciphers from its offset.
 */
import { createCipheriv, randomBytes } from 'node:crypto';

const BLOCK = 16;

export class SpillCipher {
  private readonly key = randomBytes(32);
  /** The first half of every counter block; the second is the block's index in the file. */
  private readonly nonce = randomBytes(8);

  /** `bytes` at `position` of the spill file, enciphered or deciphered (counter mode is its own inverse). */
  apply(bytes: Buffer, position: number): Buffer {
    const counter = Buffer.concat([this.nonce, Buffer.alloc(8)]);
    counter.writeBigUInt64BE(BigInt(Math.floor(position / BLOCK)), 8);
    const cipher = createCipheriv('aes-256-ctr', this.key, counter);
    cipher.update(Buffer.alloc(position % BLOCK));
    return cipher.update(bytes);
  }
}
