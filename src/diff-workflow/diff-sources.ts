/**
 * The diff workflow: what differs between two environments or snapshots, before anything is written.
 * Two snapshots are read side by side in name order (`src/snapshot/merge.ts`: both are sorted by name),
 * into the diff of `src/diff/merged.ts`: each name is compared as it comes up, and a line byte for byte
 * the same on both sides is parsed once and not compared field by field. Two environments are read at
 * once (each through the streamed export) into the streaming differ of `src/diff/stream.ts`, which
 * compares each pair as soon as both halves are read. A snapshot against an environment is read in
 * two steps: the snapshot first, keeping per connection only its place in the file (and checked whole,
 * trailer included, before the environment is contacted), then the export, each of whose connections
 * is compared with its twin read again from the file: the export's order is not the snapshot's (name)
 * order, and nothing waits. Everything runs on one thread. Nothing is returned until both sides are
 * read and checked, so a damaged snapshot or an unreachable service never leaves half a plan.
 */
import { statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { type ClientFactory, withClient } from '../api/client-factory.js';
import { exportConnections } from '../api/connections.js';
import type { HttpClient } from '../api/http.js';
import { listScanProfiles } from '../api/scan-profiles.js';
import type { Config, ResolvedEnvironment } from '../config.js';
import { parseIgnoreRule } from '../diff/ignore.js';
import { createMergedDiff } from '../diff/merged.js';
import { type ComparableProfile, diffScanProfiles, toComparableProfile } from '../diff/scan-profiles.js';
import { createStreamingDiff, type StreamingDiff, type StreamingDiffResult } from '../diff/stream.js';
import type { DiffOptions as DiffOptionsOfCompare, DiffResult } from '../diff/types.js';
import { ConfigError, InputFileError, UsageError } from '../errors.js';
import type { Connection } from '../model/connection.js';
import type { SnapshotScanProfile } from '../model/scan-profile.js';
import { isProfileServerField } from '../profiles/server-fields.js';
import { loadShippedCatalog, type TemplateCatalog } from '../schema/catalog.js';
import { mergeSnapshots } from '../snapshot/merge.js';
import { HOLD_FOR_REREADS_BYTES } from '../snapshot/placed.js';
import { type EntryPlace, indexSnapshot } from '../snapshot/read.js';

export type DiffSide =
  | { readonly kind: 'environment'; readonly ref: string }
  | { readonly kind: 'snapshot'; readonly path: string; readonly ref: string };

const URL_PATTERN = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * Decide whether `--from`/`--to` names an environment or a snapshot file, in this order:
 * a URL is an environment; a name of the config file is an environment (write `./prod` for a file
 * called `prod`); an existing file, or a path ending in `.jsonl`, is a snapshot.
 *
 * @throws InputFileError when a `.jsonl` path does not exist; UsageError when it is none of these.
 */
export function classifySide(ref: string, flag: 'from' | 'to', config: Config, cwd: string): DiffSide {
  if (ref.trim() === '')
    throw new UsageError(`Expected --${flag} to be an environment or a snapshot file, got ''`);
  if (URL_PATTERN.test(ref) || Object.hasOwn(config.environments, ref)) return { kind: 'environment', ref };
  const path = resolve(cwd, ref);
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat?.isDirectory()) {
    throw new UsageError(
      `Expected --${flag} to be a snapshot file or an environment, got the directory '${ref}'`,
      {
        hint: 'Name a *.snapshot.jsonl file inside it',
      },
    );
  }
  if (stat?.isFile()) return { kind: 'snapshot', path, ref };
  if (ref.endsWith('.jsonl')) {
    throw new InputFileError(ref, undefined, 'no such snapshot file', {
      hint: `Check the path given to --${flag} (relative to ${cwd})`,
    });
  }
  const names = Object.keys(config.environments);
  throw new UsageError(
    `Expected --${flag} to be an environment name from the config file, a base URL (https://host[:port]) or a snapshot file, got '${ref}'`,
    {
      hint:
        names.length > 0
          ? `Environments in ${config.path ?? 'the config file'}: ${names.join(', ')}`
          : 'No config file was found; give a base URL or a snapshot file',
    },
  );
}

/**
 * The ignore rules of a run: `diff.ignoreFields` of the config file, then every `--ignore-field`.
 *
 * @throws ConfigError for a bad rule in the config file, UsageError for a bad flag.
 */
export function collectIgnoreFields(flagValue: unknown, config: Config): string[] {
  const fromConfig = config.diff?.ignoreFields ?? [];
  for (const text of fromConfig) {
    const parsed =
      typeof text === 'string' ? parseIgnoreRule(text) : { ok: false as const, problem: 'a string' };
    if (!parsed.ok) {
      throw new ConfigError(`${config.path ?? 'config'}: diff.ignoreFields: expected ${parsed.problem}`, {
        hint: 'Fix the config file',
      });
    }
  }
  const raw = flagValue === undefined ? [] : Array.isArray(flagValue) ? flagValue : [flagValue];
  const fromFlags = raw.map((v) => (typeof v === 'string' ? v : String(v)));
  for (const text of fromFlags) {
    const parsed = parseIgnoreRule(text);
    if (!parsed.ok)
      throw new UsageError(`Expected --ignore-field to be ${parsed.problem}`, { hint: 'See --help' });
  }
  return [...fromConfig, ...fromFlags];
}

/**
 * What {@link diffSources} compares; `schemas` is absolute. `from` and `to` are the references as
 * typed (an environment name or URL, or a snapshot path relative to `cwd`): the workflow decides which
 * ({@link classifySide}, which looks at the file system), `--from` first, so of two bad sides the
 * error names `--from`.
 */
export interface DiffOptions {
  readonly from: string;
  readonly to: string;
  /** The run's config file: its environment names decide what a side is. */
  readonly config: Config;
  /** The folder snapshot paths are relative to. */
  readonly cwd: string;
  /** Rules from {@link collectIgnoreFields}. */
  readonly ignoreFields: readonly string[];
  /** Template schemas folder whose x-secret fields are masked; default the shipped one. */
  readonly schemas: string | undefined;
}

/** The outside world of {@link diffSources}. */
export interface DiffPorts {
  /** Resolves the environment that `--from` or `--to` names (called only for an environment side). */
  readonly resolveEnvironment: (flag: 'from' | 'to') => Promise<ResolvedEnvironment>;
  readonly createClient: ClientFactory;
  /** Ctrl-C. */
  readonly signal: AbortSignal;
}

/** A side as read: its label and its scan profiles ready to compare. */
interface SideRead {
  /**
   * Scan profiles ready to compare (`dataSourceList` as connection names); empty for a snapshot that
   * holds none (version 1, or exported without them).
   */
  readonly profiles: ComparableProfile[];
  /** For messages: `<file> (snapshot)` or `<environment> (environment)`. */
  readonly label: string;
}

export interface SideContent extends SideRead {
  /** Connections read. */
  readonly count: number;
}

export type DiffEvent = {
  readonly kind: 'sides-read';
  readonly from: { readonly label: string; readonly count: number };
  readonly to: { readonly label: string; readonly count: number };
};

export interface DiffSourcesResult {
  readonly diff: DiffResult;
  readonly from: SideContent;
  readonly to: SideContent;
  /** The type of a connection only in `from` (text output shows it). */
  readonly typeOf: (name: string) => string | undefined;
}

/**
 * Read both sides and compare them as they come (two snapshots side by side in name order, a snapshot
 * beside an environment's export, two environments at once: see the module comment), never holding
 * both sides whole. The result is known, and returned, only once both sides are read and checked (a
 * snapshot's trailer, the export's end).
 */
export async function diffSources(
  options: DiffOptions,
  ports: DiffPorts,
  onEvent: (event: DiffEvent) => void,
): Promise<DiffSourcesResult> {
  const sides = {
    from: classifySide(options.from, 'from', options.config, options.cwd),
    to: classifySide(options.to, 'to', options.config, options.cwd),
  };
  const catalog = await loadShippedCatalog(options.schemas);
  const [fromRead, toRead, found] = await readBothSides(sides, ports, options.ignoreFields, catalog);
  const from: SideContent = { ...fromRead, count: found.counts.from };
  const to: SideContent = { ...toRead, count: found.counts.to };
  onEvent({
    kind: 'sides-read',
    from: { label: from.label, count: from.count },
    to: { label: to.label, count: to.count },
  });
  const diff =
    from.profiles.length === 0 && to.profiles.length === 0
      ? found.result
      : { ...found.result, scanProfiles: diffScanProfiles(from.profiles, to.profiles) };
  return { diff, from, to, typeOf: found.typeOf };
}

/** A snapshot side as read: its label and its scan profiles ready to compare. */
function snapshotSideOf(
  side: Extract<DiffSide, { kind: 'snapshot' }>,
  profiles: readonly SnapshotScanProfile[],
): SideRead {
  return {
    profiles: profiles.map((p) =>
      toComparableProfile(p.scanProfile, p.dataSourceNames, isProfileServerField),
    ),
    label: `${basename(side.path)} (snapshot)`,
  };
}

/**
 * Read an environment's connections (the streamed export) into `onEntry`, then its scan profiles
 * (which name their connections by id: each connection's name is kept by its id).
 */
async function readEnvironmentSide(
  flag: 'from' | 'to',
  ports: DiffPorts,
  signal: AbortSignal,
  onEntry: (entry: Connection) => void,
): Promise<SideRead> {
  const resolveEnvironment = () => ports.resolveEnvironment(flag);
  return withClient({ ...ports, resolveEnvironment }, async (client, environment) => {
    const nameById = new Map<string, string>();
    for await (const entry of exportConnections(client, { signal })) {
      if (typeof entry._id === 'string') nameById.set(entry._id, entry.name);
      onEntry(entry);
    }
    const profiles = await readEnvironmentProfiles(client, nameById, signal);
    return { profiles, label: `${environment.label} (environment)` };
  });
}

/**
 * An environment's scan profiles, `dataSourceList` named through its connections' ids (an element that is
 * no connection's `_id` stays as it is: real profiles often list names). A service without the
 * profiles endpoint (404) has none.
 */
async function readEnvironmentProfiles(
  client: HttpClient,
  nameById: ReadonlyMap<string, string>,
  signal: AbortSignal,
): Promise<ComparableProfile[]> {
  return (await listScanProfiles(client, { signal, ifServed: true }))
    .filter((p) => typeof p.name === 'string')
    .map((p) => {
      const list = Array.isArray(p.dataSourceList) ? p.dataSourceList : [];
      return toComparableProfile(
        p,
        list.map((ref) => (typeof ref === 'string' ? (nameById.get(ref) ?? null) : null)),
        isProfileServerField,
      );
    });
}

/**
 * A snapshot against an environment: the snapshot is read and checked whole first (a damaged one
 * fails before the environment is contacted), keeping per connection its place in the file; then the
 * export is read, each of its connections compared with its twin read again from the file; the
 * snapshot's connections the environment lacks are read again at the end. Sides in from, to order.
 */
async function readSnapshotAndEnvironment(
  snapshotSide: Extract<DiffSide, { kind: 'snapshot' }>,
  snapshotFlag: 'from' | 'to',
  ports: DiffPorts,
  compare: DiffOptionsOfCompare,
): Promise<[SideRead, SideRead, StreamingDiffResult]> {
  const differ = createStreamingDiff(compare);
  const places = new Map<string, EntryPlace>();
  const indexed = await indexSnapshot(snapshotSide.path, ({ name, place }) => places.set(name, place), {
    label: snapshotSide.ref,
    signal: ports.signal,
    // Four times the import's hold, a 100 000-connection snapshot (76 MB) included: the diff holds
    // little else, and a read from the file per connection costs more than the connection's parse.
    holdForRereadsUpTo: 4 * HOLD_FOR_REREADS_BYTES,
  });
  const { file } = indexed;
  try {
    const environmentFlag = snapshotFlag === 'from' ? 'to' : 'from';
    const environment = await readEnvironmentSide(environmentFlag, ports, ports.signal, (entry) => {
      const place = typeof entry.name === 'string' ? places.get(entry.name) : undefined;
      if (place === undefined) {
        differ.add(environmentFlag, entry);
        return;
      }
      // A second connection of this name is no pair: the differ refuses it as a duplicate.
      places.delete(entry.name);
      const twin = file.reread(place);
      if (snapshotFlag === 'from') differ.pair(twin, entry);
      else differ.pair(entry, twin);
    });
    for (const place of places.values())
      differ.add(snapshotFlag, file.reread(place), () => file.reread(place));
    const snapshot = snapshotSideOf(snapshotSide, indexed.profiles);
    return snapshotFlag === 'from'
      ? [snapshot, environment, differ.finish()]
      : [environment, snapshot, differ.finish()];
  } finally {
    file.close();
  }
}

/**
 * Two snapshots: read side by side in name order (both are sorted by name), a pair compared as soon
 * as its name comes up on both sides, byte-equal lines parsed once and not compared field by field.
 */
async function mergeTwoSnapshots(
  from: Extract<DiffSide, { kind: 'snapshot' }>,
  to: Extract<DiffSide, { kind: 'snapshot' }>,
  signal: AbortSignal,
  compare: DiffOptionsOfCompare,
): Promise<[SideRead, SideRead, StreamingDiffResult]> {
  const differ = createMergedDiff(compare);
  const read = await mergeSnapshots(
    { path: from.path, label: from.ref },
    { path: to.path, label: to.ref },
    differ,
    { signal },
  );
  return [snapshotSideOf(from, read.from.profiles), snapshotSideOf(to, read.to.profiles), differ.finish()];
}

/**
 * Read both sides and compare them: side by side for two snapshots, a snapshot beside an environment's
 * export, two environments at once; the first failure stops the other side.
 */
async function readBothSides(
  sides: { readonly from: DiffSide; readonly to: DiffSide },
  ports: DiffPorts,
  ignoreFields: readonly string[],
  catalog: TemplateCatalog,
): Promise<[SideRead, SideRead, StreamingDiffResult]> {
  const { from, to } = sides;
  const compare = { ignoreFields, secretFields: (type: string) => catalog.secretFields(type) };
  if (from.kind === 'snapshot' && to.kind === 'snapshot')
    return mergeTwoSnapshots(from, to, ports.signal, compare);
  if (from.kind === 'snapshot') return readSnapshotAndEnvironment(from, 'from', ports, compare);
  if (to.kind === 'snapshot') return readSnapshotAndEnvironment(to, 'to', ports, compare);
  return readTwoEnvironments(ports, compare);
}

/** Two environments, read at once into the streaming differ; the first failure stops the other. */
async function readTwoEnvironments(
  ports: DiffPorts,
  compare: DiffOptionsOfCompare,
): Promise<[SideRead, SideRead, StreamingDiffResult]> {
  const differ: StreamingDiff = createStreamingDiff(compare);
  const controller = new AbortController();
  const onAbort = () => controller.abort(ports.signal.reason);
  ports.signal.addEventListener('abort', onAbort, { once: true });
  const guard = <T>(promise: Promise<T>): Promise<T> =>
    promise.catch((error: unknown) => {
      controller.abort(error);
      throw error;
    });
  const reading = [
    guard(readEnvironmentSide('from', ports, controller.signal, (entry) => differ.add('from', entry))),
    guard(readEnvironmentSide('to', ports, controller.signal, (entry) => differ.add('to', entry))),
  ] as const;
  try {
    const [from, to] = await Promise.all(reading);
    return [from, to, differ.finish()];
  } finally {
    await Promise.allSettled(reading);
    ports.signal.removeEventListener('abort', onAbort);
  }
}
