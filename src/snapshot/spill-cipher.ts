/**
 * The spill file of an encrypted export holds ciphertext only: each byte is enciphered with AES-256 in
 * counter mode under a key drawn for this one write and kept in memory, so no connection is on disk in
 * the clear at any moment, and any run of lines is read back from its offset (the counter block of each
 * 16 bytes holds their index in the file). The key is gone with the process; the file is removed at the
 * end of the write either way.
 */
import { createCipheriv, randomBytes } from 'node:crypto';

const BLOCK = 16;

export class SpillCipher {
  private readonly key = randomBytes(32);
  /** The first half of every counter block; the second half is the block's index in the file. */
  private readonly nonce = randomBytes(8);

  /**
   * `bytes`, standing at `position` of the spill file, enciphered (or deciphered: counter mode is its own
   * inverse).
   */
  apply(bytes: Buffer, position: number): Buffer {
    const counter = Buffer.concat([this.nonce, Buffer.alloc(8)]);
    counter.writeBigUInt64BE(BigInt(Math.floor(position / BLOCK)), 8);
    const cipher = createCipheriv('aes-256-ctr', this.key, counter);
    cipher.update(Buffer.alloc(position % BLOCK));
    return cipher.update(bytes);
  }
}
