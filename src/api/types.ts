/**
 * The service's resources as dds-migrate sees them. Fields beyond those the spec names are kept
 * verbatim (`[key: string]: unknown`): values are mixed-typed on purpose and must round-trip.
 */

/** A data source connection as listed or exported. `name` is the natural key. */
export interface Connection {
  readonly _id?: string;
  readonly name: string;
  readonly type: string;
  readonly [field: string]: unknown;
}

/** One clause of the service's JSON-array filter: `[{"field":"type","value":["s3"],"operator":"in"}]`. */
export interface FilterClause {
  readonly field: string;
  readonly value: string | number | boolean | readonly (string | number | boolean)[];
  readonly operator: 'equal' | 'notEqual' | 'in' | 'contains';
}

/** Options of a paged list. `filter` is clauses (encoded as the JSON array) or a raw string sent as is. */
export interface ListOptions {
  readonly filter?: readonly FilterClause[] | string;
  /** `field`, `field:asc` or `field:desc`. */
  readonly sort?: string;
  /** Page size asked for; the service may clamp it. Default 1000. */
  readonly pageSize?: number;
  /** Comma-separated field list (cases only). */
  readonly fields?: string;
  readonly signal?: AbortSignal;
}

/** A scan profile (spec 2.2); unknown fields kept. */
export interface ScanProfile {
  readonly _id?: string;
  readonly name: string;
  readonly description?: string;
  readonly dataSourceList: readonly string[];
  readonly scanTemplateId: string;
  readonly isSingleRunScan?: boolean;
  readonly schedule?: {
    readonly cronExpression: string;
    readonly timeZone: string;
    readonly [k: string]: unknown;
  };
  readonly [field: string]: unknown;
}

/** A security case (spec 2.3). `caseId` is filled from `caseId ?? id` on read. */
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

/** A connector template field, real shape (api-notes): the connection key is `apiName`. */
export interface TemplateField {
  readonly apiName: string;
  readonly name?: string;
  readonly type?: string;
  readonly mandatory?: boolean;
  readonly validation?: readonly { readonly regex?: string; readonly errorText?: string }[];
  readonly defaultValue?: unknown;
  readonly options?: readonly unknown[];
  readonly [k: string]: unknown;
}

/** A connector template (`GET ds-connections-types/template/{type}`). */
export interface ConnectorTemplate {
  readonly name: string;
  readonly fields: readonly TemplateField[];
  readonly [k: string]: unknown;
}

/** What a successful create answered. */
export interface CreatedConnection {
  readonly name: string;
  readonly _id: string | undefined;
}
