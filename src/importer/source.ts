import type { SafeImage } from '../sync/journal/records.js';

/** Hands out a plan step's value when it is needed: prepared then (read again), or {@link held}. */
export interface Source<T> {
  load(): T;
}

/** A value already in memory, as a source. */
export function held<T>(value: T): Source<T> {
  return new Held(value);
}

/** A class, not a closure: every held value shares one shape. */
class Held<T> implements Source<T> {
  constructor(private readonly value: T) {}

  load(): T {
    return this.value;
  }
}

/** A before-image, kept until its update or delete is sent. */
export type ImageSource = Source<SafeImage>;

/** A secret an update writes, and where its value comes from (the target's cannot be read). */
export interface SecretWritten {
  readonly path: string;
  readonly from: 'snapshot' | 'overrides';
}
