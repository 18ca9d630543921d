/** One problem found in an input by validation or pre-flight (an entry's field or a run-wide condition). */
export interface Problem {
  /** Undefined for run-wide problems. */
  readonly entry?: string;
  readonly type?: string;
  /** JSON pointer of the field. */
  readonly path?: string;
  readonly message: string;
  readonly code?: ProblemCode;
  /** The entry whose refusal this problem follows from: counted, not listed, when both are refused. */
  readonly causedBy?: string;
}

/** A secret `--overrides` must supply (`overrides init` writes a variable for each). */
export type ProblemCode = 'secret-masked' | 'secret-empty';
