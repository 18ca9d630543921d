/**
 * Public types of the emulator: its options, seed format, fault rules and the record tests read.
 * Independent of `src/api/`: the emulator is a second reading of the spec, so nothing is shared.
 */

/** A data source connection as stored: free-form configuration with a unique `name` and a `type`. */
export type ConnectionRecord = Record<string, unknown> & { _id: string; name: string; type: string };

/** A connection in a seed file: `_id` is optional (a stable 24-hex id is derived from the name). */
export type SeedConnection = Record<string, unknown> & { _id?: string; name: string; type: string };

/** A scan schedule (`schedule` of a scan profile); the shape is the api-notes guess. */
export interface ScanSchedule {
  readonly cronExpression: string;
  readonly timeZone: string;
}

/** A scan profile as stored and returned. */
export type ScanProfileRecord = Record<string, unknown> & {
  _id: string;
  name: string;
  dataSourceList: string[];
  scanTemplateId: string;
  isSingleRunScan?: boolean;
  schedule?: ScanSchedule;
};

/**
 * A security case as stored. A case without `_id` holds `id` and `caseId` with the same value (the
 * spec's shape); a case with `_id` (a deployment's Mongo id, which the write endpoints take) keeps its
 * `caseId` and `id` as given.
 */
export type SecurityCaseRecord = Record<string, unknown> & {
  _id?: string;
  id?: string;
  caseId?: string;
  caseStatus: string;
};

/** A case in a seed file: one of `_id`, `id` or `caseId` must be given. */
export type SeedCase = Record<string, unknown> & {
  _id?: string;
  id?: string;
  caseId?: string;
  caseStatus?: string;
};

/** A scan template a profile may reference through `scanTemplateId`. */
export interface ScanTemplate {
  readonly _id: string;
  readonly name: string;
}

/** A scan started by the creation of a one-time (`isSingleRunScan: true`) profile. */
export interface StartedScan {
  readonly scanId: string;
  readonly profileId: string;
  readonly profileName: string;
  readonly dataSourceList: readonly string[];
  readonly at: number;
}

/** One change to a case, kept so tests (and people) can see why a status moved. */
export interface CaseAuditEntry {
  readonly caseId: string;
  readonly field: string;
  readonly from: unknown;
  readonly to: unknown;
  /** `auditReason` of the request, when it carried one. */
  readonly reason: string | undefined;
  readonly via: 'case-status' | 'cases:update';
  readonly at: number;
}

/**
 * Seed file format (`--data FILE`), also the shape of a persisted state file.
 * Every key is optional; connections carry their real (clear) secret values.
 */
export interface EmulatorSeed {
  connections?: SeedConnection[];
  scanProfiles?: Array<Record<string, unknown>>;
  cases?: SeedCase[];
  /** Valid `scanTemplateId` values; the built-in defaults are always available too. */
  scanTemplates?: ScanTemplate[];
  /** Only in state files: scans started so far. */
  scansStarted?: StartedScan[];
  /** Only in state files: the case audit trail. */
  caseAudit?: CaseAuditEntry[];
  /**
   * Scanners served by `GET /api/v1/scanner-status`. Default when absent: one scanner per
   * `scanner_group` the seed's connections use, plus `default`.
   */
  scanners?: ScannerRecord[];
  /**
   * Stored credentials served by `GET /api/v1/credentials` (clear values; masked on the way out).
   * Default when absent: one per `credential_id` the seed's connections reference.
   */
  credentials?: CredentialRecord[];
  /** Names of connections whose `ds-connection-test` fails (see {@link EmulatorOptions.testFailures}). */
  connectionTestFailures?: string[];
}

/** A scanner, as listed by `GET /api/v1/scanner-status` (shape: a guess, see docs/emulator.md). */
export type ScannerRecord = Record<string, unknown> & { name: string; scanner_group: string };

/** A stored credential, as listed by `GET /api/v1/credentials` (shape: a guess, see docs/emulator.md). */
export type CredentialRecord = Record<string, unknown> & { credential_id: string };

/** What a fault does to a request it hits. */
export type FaultKind =
  /** Delay the answer by `value` ms (default: the emulator's latency option, else 1000 ms). */
  | 'latency'
  /** Answer 429 with `Retry-After: value` (default 1) before applying. */
  | '429'
  /** Answer 500 (spec body) before applying. */
  | '500'
  /** Apply the request, then destroy the socket without an answer. */
  | 'commit-then-drop'
  /** Apply the request, then answer 500 as if it had failed. */
  | 'commit-then-500'
  /** Answer 200 with an HTML "502 Bad Gateway" page (a proxy's), without applying. */
  | 'html-502'
  /** Reset the connection (TCP RST) before applying. */
  | 'reset'
  /** Label the JSON answer `text/html` (real deployments do). */
  | 'html-content-type'
  /** Apply, then send the answer one byte every `value` ms (default 100): an idle timeout never fires. */
  | 'trickle'
  /** Answer 200 with a valid JSON body of `value` MiB (default 256), without applying. */
  | 'oversize'
  /** As `oversize`, gzip-encoded: a small stream that expands to `value` MiB (default 512) of JSON whitespace. */
  | 'oversize-gzip';

/** All fault kinds, in the order the parser lists them in its error messages. */
export const FAULT_KINDS: readonly FaultKind[] = [
  'latency',
  '429',
  '500',
  'commit-then-drop',
  'commit-then-500',
  'html-502',
  'reset',
  'html-content-type',
  'trickle',
  'oversize',
  'oversize-gzip',
];

/** One fault rule: on requests matching `method` and `path`, apply `kind` with `probability`. */
export interface FaultRule {
  readonly kind: FaultKind;
  /** 0..1; default 1. */
  readonly probability: number;
  /** HTTP method, upper-case, or `*` (default). */
  readonly method?: string;
  /** Path glob relative to `/api/v1` (`*` matches any run of characters), or `*` (default). */
  readonly path?: string;
  /** Kind-specific number: latency in ms, Retry-After seconds for `429`, ms per byte for `trickle`, MiB for `oversize*`. */
  readonly value?: number;
}

/** Options of {@link startEmulator}; every one has a documented default. */
export interface EmulatorOptions {
  /** Interface to listen on; default `127.0.0.1`. */
  host?: string;
  /** Port; default 0 (an ephemeral port, read it from `url`). */
  port?: number;
  /** Accepted API token, as `Authorization: Bearer <t>` or raw `Authorization: <t>`; default `emulator-token`. */
  token?: string;
  /** Long-lived user token accepted by `GET /api/v1/refresh-access-token`; default `emulator-user-token`. */
  userToken?: string;
  /** Lifetime of session tokens issued by refresh-access-token; default 1 hour. */
  sessionTtlMs?: number;
  /** Seed object, or path to a JSON seed file. Ignored when `statePath` exists. */
  data?: EmulatorSeed | string;
  /** Persist the store here (tmp + rename) after each change; loaded on start when it exists. */
  statePath?: string;
  /** Time from a request's arrival to its answer, the emulator's own work inside it (a write applied on arrival); default 0. */
  latencyMs?: number;
  /** Jitter (uniform, +/-) on the latency; default 10% of `latencyMs`. */
  latencyJitterMs?: number;
  /** Token bucket rate limit in requests per second; default none. */
  rateLimit?: number;
  /** Bucket size; default `max(1, rateLimit)`. */
  rateLimitBurst?: number;
  /** Fault rules, or their string form (see docs/emulator.md). */
  faults?: string | FaultRule[];
  /** PRNG seed for faults and jitter; default 0x5eed (deterministic). */
  seed?: number;
  /** Largest page `limit` honoured (larger ones are clamped, never refused); default 1000. */
  maxPageSize?: number;
  /** Default page `limit`; default 100. */
  defaultPageSize?: number;
  /** Label every JSON answer `text/html`, as some deployments do; default false. */
  htmlContentType?: boolean;
  /** Export secrets in the clear instead of `"******"` (a deployment storing credentials in the clear); default false. */
  exportClearSecrets?: boolean;
  /** Omit `data.cases` from an empty case list, as real deployments may; default true. */
  omitEmptyCases?: boolean;
  /** Append this many generated connections (`generateConnections(n, { seed: 1 })`) to the data; default 0. */
  generate?: number;
  /** Append this many generated security cases (`generateCases(n, { seed: 1 })`) to the data; default 0. */
  generateCases?: number;
  /**
   * Names of connections whose `POST /api/v1/ds-connection-test` fails; added to the seed's
   * `connectionTestFailures`. Change at run time with `setTestFailures`.
   */
  testFailures?: readonly string[];
  /**
   * Shape of the connection test answer: `operationStatus` (default) `{"operationStatus":"SUCCESS"|"FAILED","message"}`,
   * or `success` `{"success":true|false,"message"}` (api-notes: both are possible).
   */
  testAnswerShape?: 'operationStatus' | 'success';
  /** Serve `GET scanner-status` and `GET credentials`; false: both answer 404, as deployments that lack them. Default true. */
  referencesApi?: boolean;
  /** How many requests the record keeps (at least; the oldest go first); counters stay exact. Default 100000. */
  maxRecordedRequests?: number;
  /**
   * How a refused token is answered: `401` (the spec, default) or `200` with
   * `{"success":false,"message":"Failed to authenticate token."}` labelled `text/html` (api-notes [seen]).
   */
  authRefusal?: 401 | 200;
  /**
   * The query parameter lists (connections, cases) honour for the start of a page: `skip` (the spec,
   * default), `offset` (api-notes [code]: BigID's SIEM connector pages all-cases so), or `none` (every
   * page is the first one).
   */
  paging?: 'skip' | 'offset' | 'none';
  /**
   * Ids of the cases: `same` (default: `id` = `caseId`) or `mongo` (each case without `_id` gets one,
   * `caseId` becomes a friendly `SPC-<n>`, `id` is dropped; the write endpoints take `_id`: api-notes [docs]).
   */
  caseIds?: 'same' | 'mongo';
  /**
   * `dataSourceList` of listed and fetched scan profiles: `as-stored` (default) or `names` (each element
   * that is a connection's `_id` answered as its name, as profiles made by BigID's CI action: api-notes [code]).
   */
  profileSources?: 'as-stored' | 'names';
}

/** One request as the emulator saw it. */
export interface RecordedRequest {
  /** 1-based arrival order. */
  readonly seq: number;
  readonly method: string;
  /** Path without query string, e.g. `/api/v1/ds_connections`. */
  readonly path: string;
  /** Raw query string without `?`, or empty. */
  readonly query: string;
  /** Status sent, or null when no answer was sent (dropped or reset). */
  status: number | null;
  /** The fault applied (the terminal one; `latency` and `html-content-type` when only they applied). */
  fault: FaultKind | null;
  /** True when the request changed the store. */
  applied: boolean;
  readonly at: number;
}

/** One create the store applied (a connection or a scan profile). */
export interface RecordedCreate {
  readonly kind: 'connection' | 'scanProfile';
  readonly name: string;
  readonly id: string;
  readonly at: number;
}

/** One applied change of any kind: a create, an update (PUT), a delete, or a connection test. */
export interface RecordedChange {
  readonly op: 'create' | 'update' | 'delete' | 'test';
  readonly kind: 'connection' | 'scanProfile';
  /** Connection name, or scan profile name. */
  readonly name: string;
  readonly id: string;
  readonly at: number;
}

/** What happened, for tests proving exactly-once. */
export interface EmulatorRecord {
  /**
   * The requests, in arrival order: at least the last `maxRecordedRequests` (default 100000); older ones
   * are dropped in blocks so a long-running emulator stays small. {@link requestCount} stays exact.
   */
  readonly requests: RecordedRequest[];
  /** How many requests arrived since the start (or the last reset), dropped ones included. */
  readonly requestCount: number;
  /** The applied creates, in order (capped as `requests` is; {@link createCount} stays exact). */
  readonly creates: ReadonlyArray<RecordedCreate>;
  /** The applied changes of every kind, in order (capped as `requests` is; {@link changeCount} stays exact). */
  readonly changes: ReadonlyArray<RecordedChange>;
  /** How many times `name` was created; of one kind when given, else of any kind. Exact. */
  createCount(name: string, kind?: RecordedCreate['kind']): number;
  /** How many applied changes `op` touched `name` (a connection's or a profile's); every op when omitted. Exact. */
  changeCount(name: string, op?: RecordedChange['op'], kind?: RecordedChange['kind']): number;
  /** Forget requests, creates, changes and counters (not the store). */
  reset(): void;
}

/** Read access to the emulator's data, with real (unmasked) secret values. */
export interface EmulatorStore {
  /** Connections in creation order. */
  readonly connections: readonly ConnectionRecord[];
  /** Connection by exact name. */
  getConnection(name: string): ConnectionRecord | undefined;
  /** Scan profiles in creation order. */
  readonly profiles: readonly ScanProfileRecord[];
  /** Scan profile by `_id`. */
  getProfile(id: string): ScanProfileRecord | undefined;
  /** Cases in seed order. */
  readonly cases: readonly SecurityCaseRecord[];
  /** Case by id. */
  getCase(id: string): SecurityCaseRecord | undefined;
  /** Scans started by one-time profiles. */
  readonly scansStarted: readonly StartedScan[];
  /** Every case change (both PATCH routes), oldest first. */
  readonly caseAudit: readonly CaseAuditEntry[];
  /** Valid scan template ids. */
  readonly scanTemplates: readonly ScanTemplate[];
  /** Scanners (`GET scanner-status`). */
  readonly scanners: readonly ScannerRecord[];
  /** Stored credentials with clear values (`GET credentials` masks them). */
  readonly credentials: readonly CredentialRecord[];
  /** The whole state in seed format (deep copy). */
  toSeed(): EmulatorSeed;
}

/** A started emulator. */
export interface RunningEmulator {
  /** Base URL without `/api/v1`, e.g. `http://127.0.0.1:53121`. */
  readonly url: string;
  readonly token: string;
  readonly userToken: string;
  /** The PRNG seed in use. */
  readonly seed: number;
  /** Close the server and every socket (keep-alive ones too); waits for pending state writes. */
  close(): Promise<void>;
  readonly record: EmulatorRecord;
  /** Replace the fault rules. */
  setFaults(faults: string | FaultRule[]): void;
  /** Set or remove (undefined) the rate limit; the bucket starts full. */
  setRateLimit(rps: number | undefined): void;
  /** Set the base latency (jitter becomes 10% of it unless set explicitly at start). */
  setLatency(ms: number): void;
  /** Replace the names of connections whose `ds-connection-test` fails. */
  setTestFailures(names: readonly string[]): void;
  readonly store: EmulatorStore;
}
