/**
 * The spill file of an encrypted export holds ciphertext only: each byte is enciphered with AES-256-CTR
 * under a key drawn for this one write and kept in memory, so no connection is on disk in the clear at
 * any moment, and a run of lines is read back from any offset (CTR's counter is the offset's block).
 * The key is gone with the process; the file is removed at the end of the write either way.
 */
import { createCipheriv, randomBytes } from 'node:crypto';

const BLOCK = 16;

/** The cipher of one spill file. */
export class SpillCipher {
  private readonly key = randomBytes(32);
  /** The first half of every counter block; the second half counts blocks from the file's start. */
  private readonly nonce = randomBytes(8);

  /** `bytes`, standing at `position` of the spill file, enciphered (or deciphered: CTR is its own inverse). */
  apply(bytes: Buffer, position: number): Buffer {
    const iv = Buffer.alloc(BLOCK);
    this.nonce.copy(iv);
    iv.writeBigUInt64BE(BigInt(Math.floor(position / BLOCK)), 8);
    const cipher = createCipheriv('aes-256-ctr', this.key, iv);
    const skip = position % BLOCK;
    if (skip > 0) cipher.update(Buffer.alloc(skip));
    return cipher.update(bytes);
  }
}
