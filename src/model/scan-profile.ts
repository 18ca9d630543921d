/** A scan profile (spec 2.2) as the tool sees it; unknown fields kept verbatim. */
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

/** A scan profile in a snapshot, with the source name of each `dataSourceList` id (null: unknown). */
export interface SnapshotScanProfile {
  readonly scanProfile: ScanProfile;
  readonly dataSourceNames: readonly (string | null)[];
}
