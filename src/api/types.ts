/** Wire-only types of the service's API; the resources themselves are in src/model/. */

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

/** A connection's `_id` and `name`: a listing of keys, or what a create answered. */
export interface ConnectionKey {
  readonly _id?: string | undefined;
  readonly name: string;
}
