/**
 * How a plan step holds what it sends: a value handed out when it is needed (prepared then, or held).
 */
import type { SafeImage } from '../sync/journal/records.js';

/**
 * Hands out a step's value when it is needed: prepared then (a send's or an update's body, read again
 * from the snapshot), or {@link held} in memory.
 */
export interface Source<T> {
  load(): T;
}

/** A value already in memory, as a source (undo, tests, a connection listed whole). */
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

/** A before-image (journaled with its update or delete), kept until the step is sent. */
export type ImageSource = Source<SafeImage>;

/** A secret an update writes, and where its value comes from (the target's cannot be read). */
export interface SecretWritten {
  /** JSON pointer of the secret. */
  readonly path: string;
  readonly from: 'snapshot' | 'overrides';
}
