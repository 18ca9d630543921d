/** A security case (spec 2.3) as sent; `caseId` is filled from `caseId ?? id` (writes: `caseWriteId`). */
export interface SecurityCase {
  readonly caseId: string;
  readonly caseLabel?: string;
  readonly policyName?: string;
  readonly severityLevel?: string;
  readonly assignee?: string;
  readonly dataSourceName?: string;
  readonly caseStatus?: string;
  readonly [field: string]: unknown;
}

/** One element of `casesFilters` in a bulk update (spec 2.4). */
export interface CaseFilter {
  readonly filterField: string;
  readonly filterValues: readonly string[];
}

/** A bulk update of cases (spec 4.5). */
export interface BulkCaseUpdate {
  readonly field: string;
  readonly newValue: string;
  readonly filters: readonly CaseFilter[];
}
