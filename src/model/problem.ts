/** One problem found in an input by validation or pre-flight (an entry's field or a run-wide condition). */
export interface Problem {
  /** Entry name (connection, profile) or undefined for run-wide problems. */
  readonly entry?: string;
  readonly type?: string;
  /** JSON pointer of the field. */
  readonly path?: string;
  readonly message: string;
  /**
   * What kind of problem, where a reader's next step depends on it: a secret the overrides must supply
   * (`overrides init` writes a file with a variable for each).
   */
  readonly code?: ProblemCode;
  /**
   * The entry whose own problem this one follows from (a scan profile naming a connection that is not
   * created): counted, not listed, when that entry is refused too.
   */
  readonly causedBy?: string;
}

/** Kinds of problems a reader acts on in one way: a secret that `--overrides` must supply (masked, or required and empty). */
export type ProblemCode = 'secret-masked' | 'secret-empty';
