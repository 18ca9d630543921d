/** A scan profile (spec 2.2) as the tool sees it; unknown fields kept verbatim. */

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
