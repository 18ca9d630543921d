/**
 * The verdicts of `verify`, as plain data (one `--report` line per object is a {@link VerifyItem}), and
 * the pure rules that derive them: the state of an object, the verdict of a connection test, the
 * counts and the exit decision. No I/O here.
 */
import type { ConnectionTestOutcome } from '../api/connections.js';
import type { FieldChange } from '../diff/types.js';
import { assertNever } from '../errors.js';
import { isRecord } from '../own-property.js';

/**
 * Where an object stands: `present` (on both sides, equal on every compared field), `different` (on
 * both sides, fields differ), `missing` (in the snapshot only), `extra` (in the environment only),
 * `skipped` (in the snapshot only, and an import leaves it out by design: a one-time scan profile, which
 * would start a scan; its `note` says why). A skipped object does not fail the verdict.
 */
export type VerifyState = 'present' | 'different' | 'missing' | 'extra' | 'skipped';

/** What the snapshot recorded of the source's last connection test (`connectionStatusTest.is_success`). */
export type RecordedTest = 'succeeded' | 'failed' | 'none';

/**
 * The verdict of one connection test:
 * - `passed`: the service says the connection works;
 * - `regression`: it fails now, and the snapshot recorded the source's last test as successful;
 * - `known-bad`: it fails now, and the source's last test had failed too (or none was recorded);
 * - `unknown`: the answer has no known shape (reported, never read as either outcome);
 * - `error`: the service refused the test request itself (a 4xx), with its status and message.
 */
export type TestVerdict =
  | { readonly kind: 'passed'; readonly message?: string }
  | { readonly kind: 'regression'; readonly message?: string }
  | { readonly kind: 'known-bad'; readonly recorded: 'failed' | 'none'; readonly message?: string }
  | { readonly kind: 'unknown'; readonly message?: string }
  | { readonly kind: 'error'; readonly status?: number; readonly message: string };

/** One object's verdict (and one line of `--report`). */
export interface VerifyItem {
  /** In the words of the import's report. */
  readonly object: 'connection' | 'scan profile';
  readonly name: string;
  /** A connection's type. */
  readonly type?: string;
  readonly state: VerifyState;
  /** `different`: the fields that differ (secrets as `"******"`), as `diff` reports them. */
  readonly fields?: readonly FieldChange[];
  /** Fields masked by the service on a side, so not compared (JSON pointers). */
  readonly notComparable?: readonly string[];
  /** Why an object may be in this state (e.g. a missing one-time scan profile). */
  readonly note?: string;
  /** With `--test-connections`, for a present connection: the test's verdict. */
  readonly test?: TestVerdict;
}

/** How many objects are in each state, and how the tests went. */
export interface VerifyCounts {
  readonly present: number;
  readonly different: number;
  readonly missing: number;
  readonly extra: number;
  readonly skipped: number;
}

export type TestCounts = Readonly<Record<TestVerdict['kind'], number>>;

/** Read `connectionStatusTest.is_success` of a snapshot entry (a boolean, or the text "true"/"false"). */
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

export function countTests(items: readonly VerifyItem[]): TestCounts {
  const counts = { passed: 0, regression: 0, 'known-bad': 0, unknown: 0, error: 0 };
  for (const item of items) if (item.test) counts[item.test.kind] += 1;
  return counts;
}

/**
 * Complete: every object of the snapshot is present and equal, or skipped by design (extra objects do
 * not matter).
 */
export function isComplete(items: readonly VerifyItem[]): boolean {
  return items.every(
    (item) => item.state === 'present' || item.state === 'extra' || item.state === 'skipped',
  );
}

/** Exit 0 (contract): complete and no regression; anything missing, different or regressed is exit 1. */
export function isVerified(items: readonly VerifyItem[]): boolean {
  return isComplete(items) && !items.some((item) => item.test?.kind === 'regression');
}
