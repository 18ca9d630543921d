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

/**
 * A scan profile as a snapshot (version 2) holds it: the profile as exported, and for each
 * `dataSourceList` element the name of the connection it refers to in the source (null when unknown).
 */
export interface SnapshotScanProfile {
  readonly scanProfile: ScanProfile;
  /** Same length and order as `scanProfile.dataSourceList`. */
  readonly dataSourceNames: readonly (string | null)[];
}
