import { describe, expect, it } from 'vitest';
import {
  buildSelectionClauses,
  checkCaseSelection,
  checkWhereFilters,
  combineCaseFilters,
  parseFieldsOption,
  parseRawFilter,
  parseSet,
  parseWhere,
  readListOption,
  splitList,
  toFilterClauses,
} from '../../src/cases/filter.js';
import { parseSortOption } from '../../src/cli/options.js';
import { findClosest } from '../../src/closest.js';
import { UsageError } from '../../src/errors.js';

function usageMessage(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as UsageError).message;
  }
  throw new Error('expected a UsageError');
}

describe('case filters', () => {
  it('splits comma lists with \\, escapes and merges repeated options', () => {
    expect(splitList('a, b,,c\\,d')).toEqual(['a', 'b', 'c,d']);
    expect(readListOption(['open,resolved', 'open', 'silenced'])).toEqual(['open', 'resolved', 'silenced']);
    expect(readListOption(undefined)).toEqual([]);
  });

  it('builds in-clauses from --status/--policy/--severity, severities lowercased', () => {
    expect(buildSelectionClauses({ status: ['open'], policy: [], severity: ['HIGH', 'critical'] })).toEqual([
      { field: 'caseStatus', value: ['open'], operator: 'in' },
      { field: 'severityLevel', value: ['high', 'critical'], operator: 'in' },
    ]);
    expect(combineCaseFilters({}, undefined)).toBeUndefined();
  });

  it('checks a raw --filter and merges an array with the named options', () => {
    expect(usageMessage(() => parseRawFilter('{nope'))).toMatch(/--filter to be JSON/);
    expect(usageMessage(() => parseRawFilter('[{"field":"a","operator":"like","value":"x"}]'))).toMatch(
      /operator/,
    );
    expect(usageMessage(() => parseRawFilter('"text"'))).toMatch(/JSON array/);
    expect(parseRawFilter('{"caseStatus":"open"}')).toBe('{"caseStatus":"open"}');
    expect(
      combineCaseFilters({ status: ['open'] }, '[{"field":"assignee","value":"bob","operator":"equal"}]'),
    ).toEqual([
      { field: 'caseStatus', value: ['open'], operator: 'in' },
      { field: 'assignee', value: 'bob', operator: 'equal' },
    ]);
    expect(usageMessage(() => combineCaseFilters({ status: ['open'] }, '{"assignee":"bob"}'))).toMatch(
      /cannot be combined/,
    );
  });

  it('parses --where pairs into casesFilters and the matching list clauses', () => {
    const filters = parseWhere(['policyName=PII, GDPR\\, EU', 'caseStatus=open']);
    expect(filters).toEqual([
      { filterField: 'policyName', filterValues: ['PII', 'GDPR, EU'] },
      { filterField: 'caseStatus', filterValues: ['open'] },
    ]);
    expect(toFilterClauses(filters)).toEqual([
      { field: 'policyName', value: ['PII', 'GDPR, EU'], operator: 'in' },
      { field: 'caseStatus', value: ['open'], operator: 'in' },
    ]);
    expect(usageMessage(() => parseWhere([]))).toMatch(/at least one --where/);
    expect(usageMessage(() => parseWhere(['policyName']))).toMatch(/FIELD=VALUE/);
    expect(usageMessage(() => parseWhere(['caseStatus=', 'x=1']))).toMatch(/at least one value/);
    expect(usageMessage(() => parseWhere(['a=1', 'a=2']))).toMatch(/given twice/);
  });

  it('limits --set to caseStatus (known statuses) and assignee', () => {
    expect(parseSet('caseStatus=resolved')).toEqual({ field: 'caseStatus', newValue: 'resolved' });
    expect(parseSet('assignee=alice@example.com')).toEqual({
      field: 'assignee',
      newValue: 'alice@example.com',
    });
    expect(usageMessage(() => parseSet('caseStatus=resovled'))).toMatch(/one of open, acknowledged/);
    expect(usageMessage(() => parseSet('severityLevel=low'))).toMatch(/caseStatus, assignee/);
    expect(usageMessage(() => parseSet('assignee='))).toMatch(/empty/);
  });

  it('normalises --sort and checks --fields', () => {
    expect(parseSortOption('caseId')).toBe('caseId:asc');
    expect(parseSortOption('severityLevel:DESC')).toBe('severityLevel:desc');
    expect(usageMessage(() => parseSortOption('caseId:up'))).toMatch(/FIELD:desc/);
    expect(parseFieldsOption(['caseId,caseStatus', 'caseId'])).toEqual(['caseId', 'caseStatus']);
    expect(usageMessage(() => parseFieldsOption('case id'))).toMatch(/field names/);
  });
});

describe('checking case fields and values before anything is sent', () => {
  it('refuses an unknown status, naming the closest known one', () => {
    expect(() => checkCaseSelection({ status: ['opn'] })).toThrow(
      /Expected --status to be one of open, acknowledged, silenced, resolved, remediated, closed, got "opn" \(did you mean 'open'\?\)/,
    );
    expect(checkCaseSelection({ status: ['open', 'resolved'], severity: ['HIGH'] })).toEqual([]);
  });

  it('warns about a severity real deployments do not use', () => {
    const [warning, ...rest] = checkCaseSelection({ severity: ['critcal'] });
    expect(rest).toEqual([]);
    expect(warning).toContain(`--severity "critcal" is not a severity`);
    expect(warning).toContain(`did you mean 'critical'?`);
  });

  it('warns about a misspelt --where field and refuses an unknown caseStatus value', () => {
    const warnings = checkWhereFilters(parseWhere(['policy=PII-exposure', 'dataSourceName=x']));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^--where policy: not a case field .*\(did you mean 'policyName'\?\)/);
    expect(() => checkWhereFilters(parseWhere(['caseStatus=opne']))).toThrow(UsageError);
    expect(checkWhereFilters(parseWhere(['caseStatus=open', 'severityLevel=high']))).toEqual([]);
  });

  it('names no suggestion when nothing is close', () => {
    expect(findClosest('zzzzzzzz', ['open', 'resolved'])).toBeUndefined();
    expect(findClosest('sev', ['severityLevel', 'caseStatus'])).toBe('severityLevel');
  });
});
