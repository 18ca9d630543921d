import type { ConnectionTestOutcome } from '../api/connections.js';
import type { FieldChange } from '../diff/types.js';
import { assertNever } from '../errors.js';
import { isRecord } from '../own-property.js';

/** Where an object stands (docs/verify.md, "What each object is"). */
export type VerifyState = 'present' | 'different' | 'missing' | 'extra' | 'skipped';

/** What the snapshot recorded of the source's last connection test (`connectionStatusTest.is_success`). */
export type RecordedTest = 'succeeded' | 'failed' | 'none';

/**
 * A connection test's verdict: `regression` if it fails now and the snapshot recorded a success, `known-bad`
 * if it had failed (or none was recorded), `unknown` for an answer of no known shape, `error` for a 4xx.
 */
export type TestVerdict =
  | { readonly kind: 'passed'; readonly message?: string }
  | { readonly kind: 'regression'; readonly message?: string }
  | { readonly kind: 'known-bad'; readonly recorded: 'failed' | 'none'; readonly message?: string }
  | { readonly kind: 'unknown'; readonly message?: string }
  | { readonly kind: 'error'; readonly status?: number; readonly message: string };

/** One object's verdict and one line of `--report`. */
export interface VerifyItem {
  readonly object: 'connection' | 'scan profile';
  readonly name: string;
  readonly type?: string;
  readonly state: VerifyState;
  /** `different`: the fields, as `diff` reports them. */
  readonly fields?: readonly FieldChange[];
  /** Fields the service masked on a side (JSON pointers). */
  readonly notComparable?: readonly string[];
  readonly note?: string;
  /** With `--test-connections`, for a present connection. */
  readonly test?: TestVerdict;
}

/** How many objects are in each state. */
export interface VerifyCounts {
  readonly present: number;
  readonly different: number;
  readonly missing: number;
  readonly extra: number;
  readonly skipped: number;
}

export type TestCounts = Readonly<Record<TestVerdict['kind'], number>>;

/** A snapshot entry's `connectionStatusTest.is_success` (a boolean, or the text "true"/"false"). */
export function readRecordedTest(entry: Readonly<Record<string, unknown>>): RecordedTest {
  const status = Object.hasOwn(entry, 'connectionStatusTest') ? entry.connectionStatusTest : undefined;
  const flag = isRecord(status) && Object.hasOwn(status, 'is_success') ? status.is_success : undefined;
  if (flag === true || flag === 'true') return 'succeeded';
  if (flag === false || flag === 'false') return 'failed';
  return 'none';
}

/** The verdict of a test outcome, given what the snapshot recorded of the source's last test. */
export function judgeTest(outcome: ConnectionTestOutcome, recorded: RecordedTest): TestVerdict {
  const message = outcome.message === undefined ? {} : { message: outcome.message };
  switch (outcome.kind) {
    case 'succeeded':
      return { kind: 'passed', ...message };
    case 'failed':
      return recorded === 'succeeded'
        ? { kind: 'regression', ...message }
        : { kind: 'known-bad', recorded, ...message };
    case 'unknown':
      return { kind: 'unknown', ...message };
    default:
      return assertNever(outcome, 'test outcome');
  }
}

export function countStates(items: readonly VerifyItem[]): VerifyCounts {
  const counts = { present: 0, different: 0, missing: 0, extra: 0, skipped: 0 };
  for (const item of items) counts[item.state] += 1;
  return counts;
}

/** How many tests had each verdict. */
export function countTests(items: readonly VerifyItem[]): TestCounts {
  const counts = { passed: 0, regression: 0, 'known-bad': 0, unknown: 0, error: 0 };
  for (const item of items) if (item.test) counts[item.test.kind] += 1;
  return counts;
}

/** Every object of the snapshot present and equal, or skipped by design (extra ones do not matter). */
export function isComplete(items: readonly VerifyItem[]): boolean {
  return items.every(
    (item) => item.state === 'present' || item.state === 'extra' || item.state === 'skipped',
  );
}

/** Exit 0 (contract): complete and no regression; anything missing, different or regressed is exit 1. */
export function isVerified(items: readonly VerifyItem[]): boolean {
  return isComplete(items) && !items.some((item) => item.test?.kind === 'regression');
}
