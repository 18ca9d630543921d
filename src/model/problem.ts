/** A problem found in an input (an entry's field or a run-wide condition). */

/** One problem found by validation or pre-flight. */
export interface Problem {
  /** Entry name (connection, profile) or undefined for run-wide problems. */
  readonly entry?: string;
  readonly type?: string;
  /** JSON pointer of the field. */
  readonly path?: string;
  readonly message: string;
}
