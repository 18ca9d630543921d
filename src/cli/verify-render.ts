/**
 * The result of `dds-migrate verify` as text (summary first, then the details) and as JSON.
 */
import type { FieldChange } from '../diff/types.js';
import { displayName } from '../display-name.js';
import type { TestVerdict, VerifyCounts, VerifyItem } from '../verify/verdict.js';
import type { VerifyResult } from '../verify/verify-environment.js';

function formatCounts(counts: VerifyCounts): string {
  const skipped = counts.skipped > 0 ? `, ${counts.skipped} skipped` : '';
  return `${counts.present} present, ${counts.different} different, ${counts.missing} missing, ${counts.extra} extra${skipped}`;
}

function showValue(field: FieldChange, side: 'from' | 'to'): string {
  if (!Object.hasOwn(field, side)) return '(absent)';
  return JSON.stringify(field[side]) ?? 'null';
}

function describeTest(verdict: TestVerdict): string {
  const said = 'message' in verdict && verdict.message ? `: ${verdict.message}` : '';
  switch (verdict.kind) {
    case 'passed':
      return `passed${said}`;
    case 'regression':
      return `REGRESSION (the source's last test had passed; fails now)${said}`;
    case 'known-bad':
      return `known-bad (${
        verdict.recorded === 'failed' ? "the source's last test had failed too" : 'no earlier test recorded'
      })${said}`;
    case 'unknown':
      return `unknown (an answer of no known shape, not read as a pass or a failure)${said}`;
    case 'error':
      return `error (the service refused the test request)${said}`;
  }
}

/** The text form: summary first (five seconds), then the details. */
export function renderVerifyText(result: VerifyResult): string[] {
  const lines: string[] = [];
  const regressions = result.items.filter((i) => i.test?.kind === 'regression').map((i) => i.name);
  const verdict = result.complete ? 'complete' : 'NOT COMPLETE';
  lines.push(
    `Verify of ${result.environment} against ${result.snapshot}: ${verdict}${
      regressions.length > 0 ? `, ${regressions.length} REGRESSION${regressions.length === 1 ? '' : 'S'}` : ''
    }`,
  );
  lines.push(`  connections:   ${formatCounts(result.connections)}`);
  if (result.scanProfiles) lines.push(`  scan profiles: ${formatCounts(result.scanProfiles)}`);
  else lines.push('  scan profiles: not compared (the snapshot holds none)');
  if (result.tests) {
    const t = result.tests;
    const inconclusive = t.unknown + t.error;
    lines.push(
      `  tests:         ${t.passed} passed, ${t.regression} regression, ${t['known-bad']} known-bad${
        inconclusive > 0 ? `, ${t.unknown} unknown, ${t.error} error` : ''
      }`,
    );
  }
  if (regressions.length > 0) lines.push(`  regressions:   ${regressions.join(', ')}`);

  const detail = (title: string, items: readonly VerifyItem[], render: (item: VerifyItem) => string[]) => {
    if (items.length === 0) return;
    lines.push('', title);
    for (const item of items) lines.push(...render(item));
  };
  const label = (item: VerifyItem) =>
    `${item.object === 'scan profile' ? 'scan profile ' : ''}${displayName(item.name)}${item.type ? ` (${item.type})` : ''}`;
  const byState = (state: VerifyItem['state']) => result.items.filter((i) => i.state === state);
  detail('Missing (in the snapshot, not in the environment):', byState('missing'), (i) => [
    `  - ${label(i)}${i.note ? `: ${i.note}` : ''}`,
  ]);
  detail(
    'Skipped (in the snapshot, left out by the import by design; not a failure):',
    byState('skipped'),
    (i) => [`  - ${label(i)}${i.note ? `: ${i.note}` : ''}`],
  );
  detail('Different (fields as snapshot -> environment):', byState('different'), (i) => [
    `  ~ ${label(i)}`,
    ...(i.fields ?? []).map((f) => `      ${f.path}: ${showValue(f, 'from')} -> ${showValue(f, 'to')}`),
  ]);
  detail('Extra (in the environment, not in the snapshot):', byState('extra'), (i) => [`  + ${label(i)}`]);
  detail(
    'Tests that did not pass:',
    result.items.filter((i) => i.test !== undefined && i.test.kind !== 'passed'),
    (i) => [`  ! ${label(i)}: ${describeTest(i.test as TestVerdict)}`],
  );
  const masked = result.items.reduce((n, i) => n + (i.notComparable?.length ?? 0), 0);
  if (masked > 0) {
    lines.push(
      '',
      `${masked} field${masked === 1 ? ' was' : 's were'} masked by the service and not compared (secrets; --format json lists them)`,
    );
  }
  return lines;
}

/** The JSON form (`--format json`, `--json`). */
export function buildVerifyJson(result: VerifyResult) {
  return {
    ok: result.verified,
    complete: result.complete,
    snapshot: result.snapshot,
    environment: result.environment,
    connections: result.connections,
    scanProfiles: result.scanProfiles ?? null,
    tests: result.tests ?? null,
    regressions: result.items.filter((i) => i.test?.kind === 'regression').map((i) => i.name),
    report: result.reportPath ?? null,
    items: result.items,
  };
}
