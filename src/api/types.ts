/**
 * Wire-only types of the service's API: list filters and options, what a create answered. The resources
 * themselves (connection, template, scan profile, case) are domain types in src/model/.
 */

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

/**
 * A connection's `_id` and `name`: what a listing keeps of each when only the keys are needed, and what
 * a create answered.
 */
export interface ConnectionKey {
  readonly _id?: string | undefined;
  readonly name: string;
}
