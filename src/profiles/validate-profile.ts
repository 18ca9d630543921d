import { join } from 'node:path';
import { CronExpressionParser } from 'cron-parser';
import { InputFileError } from '../errors.js';
import { readJsonFile } from '../files.js';
import { isRecord } from '../own-property.js';
import { schemasDir } from '../paths.js';
import { compileSchemaFile, type SchemaCheck, type SchemaIssue } from '../schema/ajv.js';

/** Why `expr` is not a 5-field cron expression, or undefined when it is one. */
export function checkCronExpression(expr: string): string | undefined {
  const fields = expr.trim().split(/\s+/);
  // A 6th field (seconds) or a macro such as @daily would be read differently by a 5-field service.
  if (fields.length !== 5 || fields[0] === '') {
    return `must have 5 fields (minute hour day-of-month month day-of-week), got ${fields[0] === '' ? 0 : fields.length}: ${JSON.stringify(expr)}`;
  }
  try {
    CronExpressionParser.parse(fields.join(' '));
    return undefined;
  } catch (error) {
    return `is not a valid cron expression (${error instanceof Error ? error.message : String(error)}): ${JSON.stringify(expr)}`;
  }
}

/** Why `zone` is not an IANA time zone name, or undefined when it is one. */
export function checkTimeZone(zone: string): string | undefined {
  // Offsets such as "+02:00" are accepted by newer Intl versions but are not IANA names.
  if (!/^[A-Za-z]/.test(zone))
    return `is not an IANA time zone name such as UTC or Europe/Berlin: ${JSON.stringify(zone)}`;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return undefined;
  } catch {
    return `is not a known IANA time zone (such as UTC or Europe/Berlin): ${JSON.stringify(zone)}`;
  }
}

// ajv's own words for a failed `oneOf` (every branch's complaints at once) are replaced by one clear line.
const ONE_OF_NOISE = new Set([
  'must match exactly one schema in oneOf',
  'must NOT be valid',
  'must be true',
  'must be false',
  'is required',
]);
const ONE_OF_PATHS = new Set(['', '/isSingleRunScan', '/schedule']);

/** Every problem of a profile document: schema issues (one-of rewritten clearly), then cron and time zone. */
export function checkProfileDocument(value: unknown, check: SchemaCheck): SchemaIssue[] {
  let issues = [...check(value)];
  if (!isRecord(value)) return issues;
  const single = value.isSingleRunScan === true;
  const scheduled = value.schedule !== undefined;
  if (single === scheduled) {
    issues = issues.filter((i) => !(ONE_OF_PATHS.has(i.path) && ONE_OF_NOISE.has(i.message)));
    issues.push(
      single
        ? {
            path: '/schedule',
            message:
              'must be absent in a one-time profile (isSingleRunScan: true): give one of them, not both',
          }
        : {
            path: '',
            message: 'needs either "isSingleRunScan": true or a "schedule": {"cronExpression", "timeZone"}',
          },
    );
  }
  const schedule = value.schedule;
  if (isRecord(schedule)) {
    if (typeof schedule.cronExpression === 'string' && schedule.cronExpression !== '') {
      const problem = checkCronExpression(schedule.cronExpression);
      if (problem) issues.push({ path: '/schedule/cronExpression', message: problem });
    }
    if (typeof schedule.timeZone === 'string' && schedule.timeZone !== '') {
      const problem = checkTimeZone(schedule.timeZone);
      if (problem) issues.push({ path: '/schedule/timeZone', message: problem });
    }
  }
  return issues;
}

/** The compiled `schemas/scan-profile.schema.json`. */
export function loadProfileSchema(): Promise<SchemaCheck> {
  return compileSchemaFile(join(schemasDir(), 'scan-profile.schema.json'));
}

/** Read and check a profile file; an {@link InputFileError} (exit 2) names every problem at once. */
export async function readProfileFile(file: string, check?: SchemaCheck): Promise<Record<string, unknown>> {
  const value = await readJsonFile(file, { what: 'scan profile file', readHint: 'Check the --file path' });
  const issues = checkProfileDocument(value, check ?? (await loadProfileSchema()));
  if (issues.length > 0) {
    const listed = issues.map((i) => `${i.path === '' ? '(root)' : i.path} ${i.message}`).join('; ');
    throw new InputFileError(file, undefined, `not a valid scan profile: ${listed}`, {
      hint: 'Fix the fields named above (schemas/scan-profile.schema.json)',
    });
  }
  return value as Record<string, unknown>;
}
