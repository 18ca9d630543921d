/**
 * A data source connection as the tool sees it (listed, exported, imported). Fields beyond those the spec
 * names are kept verbatim (`[key: string]: unknown`): values are mixed-typed on purpose and must round-trip.
 */

/** A data source connection as listed or exported. `name` is the natural key. */
export interface Connection {
  readonly _id?: string;
  readonly name: string;
  readonly type: string;
  readonly [field: string]: unknown;
}
