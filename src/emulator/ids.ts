/** Identifiers in the shape the service uses: 24 hex digits (a MongoDB ObjectId). */
import { createHash, randomBytes } from 'node:crypto';

/** True for a 24-hex identifier. */
export function isObjectId(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{24}$/i.test(value);
}

let counter = randomBytes(3).readUIntBE(0, 3);
/**
 * The random part, drawn once per process as MongoDB draws an ObjectId's ("a 5-byte random value
 * generated once per process", MongoDB manual, ObjectId): unique with the counter, and no system call
 * per id (a `randomBytes` per create was ~27 us of the emulator's time on the 2-core benchmark machine).
 */
const processRandom = randomBytes(5).toString('hex');

/** A fresh ObjectId-shaped id: seconds, random, counter, so ids also sort by creation time. */
export function newObjectId(): string {
  const seconds = Math.floor(Date.now() / 1000)
    .toString(16)
    .padStart(8, '0');
  counter = (counter + 1) % 0xffffff;
  return seconds + processRandom + counter.toString(16).padStart(6, '0');
}

/** A stable id derived from `key`, so a seed without ids gets the same ids on every start. */
export function stableObjectId(key: string): string {
  return createHash('sha1').update(key).digest('hex').slice(0, 24);
}
