/**
 * Building the service's case filters from command-line options. Pure: strings in, filter clauses out,
 * {@link UsageError} (exit 2) for anything malformed, so nothing is sent on a bad option.
 */
import type { FilterClause } from '../api/types.js';
import { findClosest } from '../closest.js';
import { UsageError } from '../errors.js';
import { splitEscapedList, splitListValues } from '../list-values.js';
import type { BulkCaseUpdate, CaseFilter } from '../model/security-case.js';

/**
 * Case statuses real deployments use (api-notes: `open`, `acknowledged`, `silenced`, `resolved`,
 * `remediated` [seen], `closed` [docs]); `cases update --set caseStatus=` accepts only these.
 */
export const CASE_STATUSES: readonly string[] = [
  'open',
  'acknowledged',
  'silenced',
  'resolved',
  'remediated',
  'closed',
];

/** Severities real deployments use (api-notes, lowercase); not known to be the whole set, so others only warn. */
export const CASE_SEVERITIES: readonly string[] = ['critical', 'high', 'medium', 'low'];

/**
 * Fields of a case known from the spec (section 2.3) and api-notes (`id`, `_id`), and `writeId` (the id
 * a write takes, computed by dds-migrate). Others may exist (the spec says further fields are not shown), so an
 * unknown one only warns.
 */
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

/**
 * Split a comma-separated option value; `\,` is a literal comma (policy names may hold commas).
 * Items are trimmed; empty items are dropped.
 */
export function splitList(value: string): string[] {
  return splitEscapedList(value).filter((s) => s !== '');
}

/** Flatten a repeatable, comma-separated option (`--status a,b --status c`) into its values, in order, without repeats. */
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
  // Real deployments use lowercase severities (api-notes); `--severity HIGH` means `high`.
  add(
    'severityLevel',
    selection.severity?.map((s) => s.toLowerCase()),
  );
  return clauses;
}

const OPERATORS = new Set(['equal', 'notEqual', 'in', 'contains']);

/**
 * A raw `--filter`: the JSON-array form `[{"field","value","operator"}]` is checked clause by clause
 * and returned as clauses (so it can be combined with `--status` etc.); a JSON object (the tutorial's
 * `{"caseStatus":"open"}`) is passed on verbatim as a string.
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
      if (clause === null || typeof clause !== 'object' || Array.isArray(clause)) {
        throw new UsageError(`Expected ${where} to be an object {field, value, operator}`);
      }
      const c = clause as Record<string, unknown>;
      if (typeof c.field !== 'string' || c.field === '')
        throw new UsageError(`Expected ${where}.field to be a non-empty string`);
      const operator = c.operator ?? (Array.isArray(c.value) ? 'in' : 'equal');
      if (typeof operator !== 'string' || !OPERATORS.has(operator)) {
        throw new UsageError(
          `Expected ${where}.operator to be one of equal, notEqual, in, contains, got ${JSON.stringify(operator)}`,
        );
      }
      if (!isFilterValue(c.value)) {
        throw new UsageError(`Expected ${where}.value to be a string, number, boolean or an array of them`);
      }
      return { field: c.field, value: c.value, operator: operator as FilterClause['operator'] };
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

/**
 * The filter `cases list` sends: the clauses of `--status/--policy/--severity` plus those of a raw
 * `--filter`. A raw filter in object form cannot be merged with clauses, so that combination is refused.
 */
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

/**
 * `--where FIELD=V1,V2` (repeatable) as the bulk body's `casesFilters`. A field given twice is refused
 * rather than guessed (intersection or union): list its values once.
 */
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

/** The same selection as list clauses (operator `in`), so the preview lists exactly what the bulk update selects. */
export function toFilterClauses(filters: readonly CaseFilter[]): FilterClause[] {
  return filters.map((f) => ({ field: f.filterField, value: [...f.filterValues], operator: 'in' }));
}

/** `--set FIELD=VALUE`: the field must be one of {@link SETTABLE_CASE_FIELDS}; a status one of {@link CASE_STATUSES}. */
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

/**
 * Refuse a case status the service does not use (its values are known: api-notes), naming the closest
 * one, so that `--status opn` is an error rather than an empty result. `flag` names the option.
 */
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

/**
 * Check `--status` / `--severity` of `cases list` before anything is sent: an unknown status is an error
 * (exit 2, the closest named); an unknown severity a warning (returned), since the set is not known whole.
 */
export function checkCaseSelection(selection: CaseSelection): string[] {
  checkStatuses(selection.status ?? [], '--status');
  return severityWarnings(selection.severity ?? [], '--severity');
}

/**
 * Check `--where` of `cases update`: a field outside the known case fields warns (closest named; the
 * service may have more fields), a `caseStatus` value outside the known statuses is an error, a
 * `severityLevel` value outside the seen severities warns. Returns the warnings.
 */
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
