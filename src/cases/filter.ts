/** The service's case filters from command-line options; pure, a {@link UsageError} on a bad one. */
import type { FilterClause } from '../api/types.js';
import { findClosest } from '../closest.js';
import { UsageError } from '../errors.js';
import { splitEscapedList, splitListValues } from '../list-values.js';
import type { BulkCaseUpdate, CaseFilter } from '../model/security-case.js';
import { isRecord } from '../own-property.js';

/** Case statuses real deployments use (api-notes: `closed` [docs], the others [seen]). */
export const CASE_STATUSES: readonly string[] = [
  'open',
  'acknowledged',
  'silenced',
  'resolved',
  'remediated',
  'closed',
];

/** Severities real deployments use (api-notes, lowercase); maybe not all, so others only warn. */
export const CASE_SEVERITIES: readonly string[] = ['critical', 'high', 'medium', 'low'];

/** Case fields: spec 2.3, api-notes (`id`, `_id`), computed `writeId`; others only warn (spec hides some). */
export const KNOWN_CASE_FIELDS: readonly string[] = [
  'caseId',
  'id',
  '_id',
  'writeId',
  'caseLabel',
  'policyName',
  'severityLevel',
  'assignee',
  'dataSourceName',
  'caseStatus',
];

/** Fields `cases update --set` may change: the two the spec names for the bulk body. */
export const SETTABLE_CASE_FIELDS: readonly string[] = ['caseStatus', 'assignee'];

/** Default columns of `cases list` in table and csv formats. */
export const DEFAULT_CASE_COLUMNS: readonly string[] = [
  'writeId',
  'caseId',
  'caseStatus',
  'severityLevel',
  'policyName',
  'dataSourceName',
  'assignee',
  'caseLabel',
];

const FIELD_NAME = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;

/** Split a comma-separated value, trimmed, empties dropped; `\,` is a comma (policy names hold some). */
export function splitList(value: string): string[] {
  return splitEscapedList(value).filter((s) => s !== '');
}

/** The values of a repeatable, comma-separated option (`--status a,b --status c`), in order, once each. */
export function readListOption(value: unknown): string[] {
  return [...new Set(splitListValues(value).filter((s) => s !== ''))];
}

/** What `cases list` can filter on by name. */
export interface CaseSelection {
  readonly status?: readonly string[];
  readonly policy?: readonly string[];
  readonly severity?: readonly string[];
}

/** `--status/--policy/--severity` as the service's JSON-array filter (operator `in`), in that order. */
export function buildSelectionClauses(selection: CaseSelection): FilterClause[] {
  const clauses: FilterClause[] = [];
  const add = (field: string, values: readonly string[] | undefined) => {
    if (values !== undefined && values.length > 0)
      clauses.push({ field, value: [...values], operator: 'in' });
  };
  add('caseStatus', selection.status);
  add('policyName', selection.policy);
  // Lowercase in real deployments (api-notes): `--severity HIGH` means `high`.
  add(
    'severityLevel',
    selection.severity?.map((s) => s.toLowerCase()),
  );
  return clauses;
}

const OPERATORS = new Set(['equal', 'notEqual', 'in', 'contains']);

/**
 * A raw `--filter`: the JSON array `[{"field","value","operator"}]` checked and returned as clauses (to
 * combine with `--status` etc.); a JSON object (the tutorial's `{"caseStatus":"open"}`) verbatim.
 */
export function parseRawFilter(text: string): FilterClause[] | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (cause) {
    throw new UsageError(`Expected --filter to be JSON, got ${JSON.stringify(text.slice(0, 80))}`, {
      hint: `Example: --filter '[{"field":"caseStatus","value":["open"],"operator":"in"}]'`,
      cause,
    });
  }
  if (Array.isArray(parsed)) {
    return parsed.map((clause, i): FilterClause => {
      const where = `--filter[${i}]`;
      if (!isRecord(clause))
        throw new UsageError(`Expected ${where} to be an object {field, value, operator}`);
      if (typeof clause.field !== 'string' || clause.field === '')
        throw new UsageError(`Expected ${where}.field to be a non-empty string`);
      const operator = clause.operator ?? (Array.isArray(clause.value) ? 'in' : 'equal');
      if (typeof operator !== 'string' || !OPERATORS.has(operator)) {
        throw new UsageError(
          `Expected ${where}.operator to be one of equal, notEqual, in, contains, got ${JSON.stringify(operator)}`,
        );
      }
      if (!isFilterValue(clause.value)) {
        throw new UsageError(`Expected ${where}.value to be a string, number, boolean or an array of them`);
      }
      return { field: clause.field, value: clause.value, operator: operator as FilterClause['operator'] };
    });
  }
  if (parsed !== null && typeof parsed === 'object') return text;
  throw new UsageError(
    `Expected --filter to be a JSON array of {field, value, operator} or a JSON object, got ${JSON.stringify(text.slice(0, 80))}`,
  );
}

function isScalar(v: unknown): v is string | number | boolean {
  return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
}

function isFilterValue(v: unknown): v is FilterClause['value'] {
  return isScalar(v) || (Array.isArray(v) && v.every(isScalar));
}

/** The filter `cases list` sends: `--status/--policy/--severity` and `--filter` (an object one alone). */
export function combineCaseFilters(
  selection: CaseSelection,
  rawFilter: string | undefined,
): FilterClause[] | string | undefined {
  const clauses = buildSelectionClauses(selection);
  if (rawFilter === undefined) return clauses.length > 0 ? clauses : undefined;
  const raw = parseRawFilter(rawFilter);
  if (typeof raw === 'string') {
    if (clauses.length > 0) {
      throw new UsageError(
        'A --filter in object form cannot be combined with --status, --policy or --severity',
        {
          hint: 'Write the filter as a JSON array of {field, value, operator}, or use only one of them',
        },
      );
    }
    return raw;
  }
  const all = [...clauses, ...raw];
  return all.length > 0 ? all : undefined;
}

/** `--where FIELD=V1,V2` (repeatable) as `casesFilters`; a field twice is refused, not guessed (and/or). */
export function parseWhere(values: readonly string[]): CaseFilter[] {
  const filters: CaseFilter[] = [];
  for (const text of values) {
    const eq = text.indexOf('=');
    const field = eq < 0 ? '' : text.slice(0, eq).trim();
    if (eq < 0 || !FIELD_NAME.test(field)) {
      throw new UsageError(`Expected --where to be FIELD=VALUE[,VALUE..], got ${JSON.stringify(text)}`, {
        hint: 'Example: --where policyName=PII-exposure --where caseStatus=open',
      });
    }
    const filterValues = splitList(text.slice(eq + 1));
    if (filterValues.length === 0)
      throw new UsageError(`Expected at least one value in --where ${field}=..., got none`);
    if (filters.some((f) => f.filterField === field)) {
      throw new UsageError(`--where ${field} is given twice`, {
        hint: `List its values once: --where ${field}=A,B`,
      });
    }
    filters.push({ filterField: field, filterValues });
  }
  if (filters.length === 0) {
    throw new UsageError('Expected at least one --where FIELD=VALUE', {
      hint: 'A bulk update without a filter would change every case',
    });
  }
  return filters;
}

/** The same selection as list clauses (operator `in`): the preview lists what the bulk update selects. */
export function toFilterClauses(filters: readonly CaseFilter[]): FilterClause[] {
  return filters.map((f) => ({ field: f.filterField, value: [...f.filterValues], operator: 'in' }));
}

/** `--set FIELD=VALUE`, a field of {@link SETTABLE_CASE_FIELDS}, a status of {@link CASE_STATUSES}. */
export function parseSet(text: string): Pick<BulkCaseUpdate, 'field' | 'newValue'> {
  const eq = text.indexOf('=');
  const field = eq < 0 ? '' : text.slice(0, eq).trim();
  const newValue = eq < 0 ? '' : text.slice(eq + 1).trim();
  if (eq < 0 || field === '')
    throw new UsageError(`Expected --set to be FIELD=VALUE, got ${JSON.stringify(text)}`);
  if (!SETTABLE_CASE_FIELDS.includes(field)) {
    throw new UsageError(
      `Expected --set field to be one of ${SETTABLE_CASE_FIELDS.join(', ')}, got ${JSON.stringify(field)}`,
    );
  }
  if (newValue === '') throw new UsageError(`Expected a value in --set ${field}=VALUE, got an empty one`);
  if (field === 'caseStatus') checkStatuses([newValue], '--set caseStatus');
  return { field, newValue };
}

/** `--fields A,B`: field names checked, order kept, repeats dropped. */
export function parseFieldsOption(value: unknown): string[] {
  const fields = readListOption(value);
  for (const f of fields) {
    if (!FIELD_NAME.test(f))
      throw new UsageError(`Expected --fields to list field names, got ${JSON.stringify(f)}`);
  }
  return fields;
}

/** ` (did you mean 'x'?)` when a known word is close, else nothing. */
function suggestion(typed: string, known: readonly string[]): string {
  const closest = findClosest(typed, known);
  return closest === undefined ? '' : ` (did you mean '${closest}'?)`;
}

/** Refuse a status the service does not use (api-notes), naming the closest: `--status opn` is an error. */
function checkStatuses(values: readonly string[], flag: string): void {
  for (const value of values) {
    if (!CASE_STATUSES.includes(value)) {
      throw new UsageError(
        `Expected ${flag} to be one of ${CASE_STATUSES.join(', ')}, got ${JSON.stringify(value)}${suggestion(value, CASE_STATUSES)}`,
      );
    }
  }
}

/** Warnings for severities outside the ones seen (lowercase compared, as the filter sends them). */
function severityWarnings(values: readonly string[], flag: string): string[] {
  return values
    .filter((v) => !CASE_SEVERITIES.includes(v.toLowerCase()))
    .map(
      (v) =>
        `${flag} ${JSON.stringify(v)} is not a severity real deployments use (${CASE_SEVERITIES.join(', ')})${suggestion(v, CASE_SEVERITIES)}; it may match nothing`,
    );
}

/** Check `--status` / `--severity` of `cases list`: an unknown status is an error, a severity a warning. */
export function checkCaseSelection(selection: CaseSelection): string[] {
  checkStatuses(selection.status ?? [], '--status');
  return severityWarnings(selection.severity ?? [], '--severity');
}

/** Check `--where` of `cases update`: an unknown status is an error; an unknown field or severity warns. */
export function checkWhereFilters(filters: readonly CaseFilter[]): string[] {
  const warnings: string[] = [];
  for (const f of filters) {
    if (!KNOWN_CASE_FIELDS.includes(f.filterField)) {
      warnings.push(
        `--where ${f.filterField}: not a case field dds-migrate knows (${KNOWN_CASE_FIELDS.join(', ')})${suggestion(f.filterField, KNOWN_CASE_FIELDS)}; it may match nothing`,
      );
    } else if (f.filterField === 'caseStatus') {
      checkStatuses(f.filterValues, '--where caseStatus');
    } else if (f.filterField === 'severityLevel') {
      warnings.push(...severityWarnings(f.filterValues, '--where severityLevel'));
    }
  }
  return warnings;
}
