/**
 * The export workflow (contract section 3): the file-download export, of all, of `ids`, or of those listed
 * for `types` / `nameGlob` (in batches of {@link EXPORT_ID_BATCH}: URLs stay bounded), written as a snapshot
 * with the source's scan profiles, data sources named from the connections seen (the list for the rest).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import picomatch from 'picomatch';
import type { ClientFactory, EnvironmentResolver } from '../api/client-factory.js';
import { BrokenExportError, exportConnections, listConnections } from '../api/connections.js';
import type { HttpClient } from '../api/http.js';
import {
  computeRetryDelay,
  createRetryBudget,
  DEFAULT_RETRY_BUDGET,
  DEFAULT_RETRY_POLICY,
  type RetryBudget,
} from '../api/retry-policy.js';
import { listScanProfiles } from '../api/scan-profiles.js';
import type { FilterClause } from '../api/types.js';

import { compareNames } from '../connections/match.js';
import { ApiError, UnavailableError } from '../errors.js';
import type { Connection } from '../model/connection.js';
import type { ScanProfile, SnapshotScanProfile } from '../model/scan-profile.js';
import { findMaskedPaths } from '../schema/catalog.js';
import type { AgeEncryption } from '../snapshot/age.js';
import { createSnapshotHeader, orderParts, type SnapshotPart } from '../snapshot/format.js';
import { prepareSnapshotTarget, type SnapshotTarget, writeSnapshot } from '../snapshot/write.js';
import { TOOL_NAME, TOOL_VERSION } from '../version.js';

export const EXPORT_ID_BATCH = 200;

/** What the export was asked for, checked; output paths are absolute. */
export interface ExportOptions {
  readonly ids: readonly string[] | undefined;
  readonly types: readonly string[] | undefined;
  readonly nameGlob: string | undefined;
  /** Default: connections and scan profiles. */
  readonly include?: readonly SnapshotPart[];
  readonly output: { readonly file: string } | { readonly outDir: string };
  readonly encryption?: AgeEncryption;
}

/** The outside world of {@link exportSnapshot}. */
export interface ExportPorts {
  readonly resolveSource: EnvironmentResolver;
  readonly createClient: ClientFactory;
  readonly signal: AbortSignal;
  /** Shared by the client's retries and the restarts of a broken download. */
  readonly retryBudget?: RetryBudget;
  /** The wait before a download starts over (default: a timer that Ctrl-C ends). */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

const sleepUnlessAborted = (ms: number, signal: AbortSignal): Promise<void> =>
  sleep(ms, undefined, { signal }).catch(() => undefined);

/** Warnings of an export, in the order they happen. */
export type ExportEvent =
  /** A listed connection without `_id`: it cannot be exported by id and is left out. */
  | { readonly kind: 'unlisted-id'; readonly name: string }
  /** Selected ids the export did not return (unknown or deleted meanwhile). */
  | { readonly kind: 'ids-missing'; readonly ids: readonly string[] }
  /** The snapshot is empty: the selection matched nothing, or the environment has no connections. */
  | { readonly kind: 'empty'; readonly cause: 'selection' | 'environment'; readonly source: string }
  /** A scan profile left out of the snapshot (no name, or no list of data sources). */
  | { readonly kind: 'profile-left-out'; readonly profile: string; readonly reason: string }
  /** `GET /scanProfiles` was refused (403) or is not there (404): the snapshot holds connections only. */
  | { readonly kind: 'profiles-unavailable'; readonly status: number; readonly message: string }
  /** `dataSourceList` elements of a profile that no connection of the source answers to (named null). */
  | { readonly kind: 'profile-unknown-sources'; readonly profile: string; readonly refs: readonly string[] };

/** Counts the summary reports, gathered while the snapshot is written. */
export interface ExportSummary {
  readonly path: string;
  readonly entryCount: number;
  readonly scanProfileCount: number;
  /** The header's `include`. */
  readonly include: readonly SnapshotPart[];
  readonly sha256: string;
  readonly types: Record<string, number>;
  /** Entries holding at least one masked secret, and how often each field is masked. */
  readonly maskedSecrets: { readonly entries: number; readonly fields: Record<string, number> };
}

export interface ExportResult {
  readonly source: string;
  readonly summary: ExportSummary;
}

/** Export the source to a snapshot; warnings go to `onEvent`. */
export async function exportSnapshot(
  options: ExportOptions,
  ports: ExportPorts,
  onEvent: (event: ExportEvent) => void,
): Promise<ExportResult> {
  const environment = await ports.resolveSource();
  const budget = ports.retryBudget ?? createRetryBudget(DEFAULT_RETRY_BUDGET);
  const client = ports.createClient(environment, { retryBudget: budget });
  try {
    const envName = environment.name ?? environment.label;
    const target: SnapshotTarget =
      'file' in options.output
        ? { path: options.output.file }
        : { outDir: options.output.outDir, environment: envName };
    // A bad -o / --out-dir fails before anything is fetched.
    await prepareSnapshotTarget(target);
    let include = orderParts(options.include ?? ['connections', 'scanProfiles']);
    // Profiles first (one request): their references tell which connections to name.
    let listed: ScanProfile[] | undefined;
    if (include.includes('scanProfiles')) {
      try {
        listed = await listScanProfiles(client, { signal: ports.signal });
      } catch (error) {
        // A deployment without the endpoint, or a token without the permission: the connections are
        // still exported, and the header says the profiles are not in it (so no import prunes them).
        const status = error instanceof ApiError ? error.status : undefined;
        if (status !== 403 && status !== 404) throw error;
        onEvent({ kind: 'profiles-unavailable', status, message: (error as ApiError).message });
        include = include.filter((p) => p !== 'scanProfiles');
        if (include.length === 0) throw error;
      }
    }
    const header = createSnapshotHeader({
      tool: `${TOOL_NAME} ${TOOL_VERSION}`,
      source: { url: environment.url, environment: envName },
      selection: { ids: options.ids, types: options.types, name: options.nameGlob },
      include,
    });
    const namer = listed === undefined ? undefined : createProfileNamer(listed, onEvent);
    let types: Record<string, number> = {};
    let maskedFields: Record<string, number> = {};
    let maskedEntries = 0;
    const onEntry = (entry: Connection) => {
      namer?.see(entry);
      types[entry.type] = (types[entry.type] ?? 0) + 1;
      const masked = findMaskedPaths(entry);
      if (masked.length > 0) maskedEntries += 1;
      for (const path of masked) {
        const field = path.slice(1).replace(/\/\d+\//g, '/*/');
        maskedFields[field] = (maskedFields[field] ?? 0) + 1;
      }
    };
    // A body that breaks off mid-stream (BrokenExportError) is downloaded again (a GET), within the
    // retry policy and budget; the writer's spill file starts over too. A failed attempt's events go.
    let written: Awaited<ReturnType<typeof writeSnapshot>>;
    let events: ExportEvent[];
    for (let attempt = 0; ; attempt++) {
      types = {};
      maskedFields = {};
      maskedEntries = 0;
      events = [];
      const attemptEvents = events;
      const entries = include.includes('connections')
        ? selectEntries(client, options, ports.signal, (event) => attemptEvents.push(event))
        : [];
      try {
        written = await writeSnapshot(target, header, entries, {
          signal: ports.signal,
          onEntry,
          ...(namer ? { profiles: () => namer.finish(client, ports.signal) } : {}),
          ...(options.encryption ? { encryption: options.encryption } : {}),
        });
        break;
      } catch (error) {
        if (!(error instanceof BrokenExportError) || ports.signal.aborted) throw error;
        const exhausted = attempt >= DEFAULT_RETRY_POLICY.retries;
        if (exhausted || !budget.take()) {
          // As the client says of a request that kept failing: exit 5, re-run.
          throw new UnavailableError(
            `${environment.label} kept failing ${
              exhausted
                ? `after ${attempt + 1} downloads of the export`
                : "and the run's retry budget is spent"
            }`,
            error.http,
            { cause: error, hint: 'Re-run the export; if it persists, check the service' },
          );
        }
        const delay = computeRetryDelay(DEFAULT_RETRY_POLICY, attempt, undefined, Math.random);
        await (ports.sleep ?? sleepUnlessAborted)(delay, ports.signal);
      }
    }
    for (const event of events) onEvent(event);
    const summary: ExportSummary = {
      path: written.path,
      entryCount: written.entryCount,
      scanProfileCount: written.scanProfileCount,
      include,
      sha256: written.sha256,
      types: sortRecord(types),
      maskedSecrets: { entries: maskedEntries, fields: sortRecord(maskedFields) },
    };
    if (summary.entryCount === 0 && include.includes('connections')) {
      onEvent({
        kind: 'empty',
        cause: options.ids || options.types || options.nameGlob ? 'selection' : 'environment',
        source: environment.label,
      });
    }
    return { source: environment.label, summary };
  } finally {
    client.close();
  }
}

async function* selectEntries(
  client: HttpClient,
  options: ExportOptions,
  signal: AbortSignal,
  onEvent: (event: ExportEvent) => void,
): AsyncGenerator<Connection> {
  if (options.types === undefined && options.nameGlob === undefined) {
    if (options.ids === undefined) {
      yield* exportConnections(client, { signal });
      return;
    }
    yield* exportByIds(client, options.ids, signal, onEvent);
    return;
  }
  const matchName = options.nameGlob === undefined ? () => true : picomatch(options.nameGlob, { dot: true });
  const wanted = options.ids === undefined ? undefined : new Set(options.ids);
  const filter: FilterClause[] =
    options.types === undefined ? [] : [{ field: 'type', value: options.types, operator: 'in' }];
  const ids: string[] = [];
  for await (const c of listConnections(client, { ...(filter.length > 0 ? { filter } : {}), signal })) {
    // The service's filter is trusted only as far as it goes: the type and the name are checked here too.
    if (options.types !== undefined && !options.types.includes(c.type)) continue;
    if (typeof c.name !== 'string' || !matchName(c.name)) continue;
    if (typeof c._id !== 'string') {
      onEvent({ kind: 'unlisted-id', name: c.name });
      continue;
    }
    if (wanted !== undefined && !wanted.has(c._id)) continue;
    ids.push(c._id);
  }
  if (ids.length === 0) return;
  yield* exportByIds(client, ids, signal, onEvent);
}

async function* exportByIds(
  client: HttpClient,
  ids: readonly string[],
  signal: AbortSignal,
  onEvent: (event: ExportEvent) => void,
): AsyncGenerator<Connection> {
  const missing: string[] = [];
  for (let i = 0; i < ids.length; i += EXPORT_ID_BATCH) {
    const batch = ids.slice(i, i + EXPORT_ID_BATCH);
    const pending = new Set(batch);
    for await (const entry of exportConnections(client, { ids: batch, signal })) {
      // A service that ignores `ids` would send everything: keep what this batch asked for, once.
      if (typeof entry._id !== 'string' || !pending.delete(entry._id)) continue;
      yield entry;
    }
    missing.push(...pending);
  }
  if (missing.length > 0) onEvent({ kind: 'ids-missing', ids: missing });
}

function sortRecord(record: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(record).sort((a, b) => compareNames(a[0], b[0])));
}

/**
 * Names the profiles' data sources: `see` each exported connection, then `finish` names the rest from the
 * connection list (`null` and an event if none answers); profiles without a name or string list are left out.
 */
function createProfileNamer(
  listed: readonly ScanProfile[],
  onEvent: (event: ExportEvent) => void,
): {
  see(entry: Connection): void;
  finish(client: HttpClient, signal: AbortSignal): Promise<SnapshotScanProfile[]>;
} {
  const profiles: ScanProfile[] = [];
  for (const p of listed) {
    const named = typeof p.name === 'string' && p.name !== '';
    const reason = !named
      ? 'it has no name'
      : !Array.isArray(p.dataSourceList) || !p.dataSourceList.every((x) => typeof x === 'string')
        ? 'its dataSourceList is not a list of strings'
        : undefined;
    if (reason === undefined) profiles.push(p);
    else onEvent({ kind: 'profile-left-out', profile: named ? p.name : String(p._id ?? '(no _id)'), reason });
  }
  const refs = new Set(profiles.flatMap((p) => p.dataSourceList));
  const byId = new Map<string, string>();
  const names = new Set<string>();
  const see = (c: { readonly _id?: unknown; readonly name?: unknown }) => {
    if (typeof c.name !== 'string') return;
    if (typeof c._id === 'string' && refs.has(c._id)) byId.set(c._id, c.name);
    if (refs.has(c.name)) names.add(c.name);
  };
  const nameOf = (ref: string): string | null => byId.get(ref) ?? (names.has(ref) ? ref : null);
  return {
    see,
    async finish(client, signal) {
      if ([...refs].some((r) => nameOf(r) === null)) {
        for await (const c of listConnections(client, { signal })) see(c);
      }
      return profiles.map((p) => {
        const dataSourceNames = p.dataSourceList.map(nameOf);
        const unknown = p.dataSourceList.filter((_, i) => dataSourceNames[i] === null);
        if (unknown.length > 0) onEvent({ kind: 'profile-unknown-sources', profile: p.name, refs: unknown });
        return { scanProfile: p, dataSourceNames };
      });
    },
  };
}
