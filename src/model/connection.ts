/**
 * A data source connection as the tool sees it (listed, exported, imported); `name` is the natural key.
 * Fields beyond those the spec names are kept verbatim: values are mixed-typed and must round-trip.
 */
export interface Connection {
  readonly _id?: string;
  readonly name: string;
  readonly type: string;
  readonly [field: string]: unknown;
}
