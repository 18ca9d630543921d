/**
 * The diff workflow: what differs between two environments or snapshots, before anything is written.
 * Two snapshots are read side by side in name order (`src/snapshot/merge.ts`: both are sorted by name),
 * into the diff of `src/diff/merged.ts`: each name is compared as it comes up, and a line byte for byte
 * the same on both sides is parsed once and not compared field by field. Two environments are read at
 * once (each through the streamed export) into the streaming differ of `src/diff/stream.ts`, which
 * compares each pair as soon as both halves are read. A snapshot against an environment goes into the
 * same differ in two steps: the snapshot first (checked whole, trailer included, before the environment
 * is contacted), each of its connections waiting as a way to read it again from the file, then the
 * export, each of whose connections is compared with its twin as it arrives. Everything runs on one
 * thread. Nothing is returned until both sides are read and checked, so a damaged snapshot or an
 * unreachable service never leaves half a plan.
 */
import { statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { type ClientFactory, withClient } from '../api/client-factory.js';
import { exportConnections } from '../api/connections.js';
import { listScanProfiles } from '../api/scan-profiles.js';
import { type Config, isUrlReference, type ResolvedEnvironment } from '../config.js';
import { parseIgnoreRule } from '../diff/ignore.js';
import { createMergedDiff } from '../diff/merged.js';
import {
  type ComparableProfile,
  diffScanProfiles,
  nameDataSources,
  toComparableProfile,
} from '../diff/scan-profiles.js';
import { createStreamingDiff, type StreamingDiff, type StreamingDiffResult } from '../diff/stream.js';
import type { DiffOptions as DiffOptionsOfCompare, DiffResult } from '../diff/types.js';
import { ConfigError, InputFileError, UsageError } from '../errors.js';
import type { Connection } from '../model/connection.js';
import type { SnapshotScanProfile } from '../model/scan-profile.js';
import { isProfileServerField } from '../profiles/server-fields.js';
import { loadShippedCatalog, type TemplateCatalog } from '../schema/catalog.js';
import { mergeSnapshots } from '../snapshot/merge.js';
import { HOLD_FOR_REREADS_BYTES } from '../snapshot/placed.js';
import { type IndexedSnapshot, indexSnapshot } from '../snapshot/read.js';

export type DiffSide =
  | { readonly kind: 'environment'; readonly ref: string }
  | { readonly kind: 'snapshot'; readonly path: string; readonly ref: string };

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
  if (isUrlReference(ref) || Object.hasOwn(config.environments, ref)) return { kind: 'environment', ref };
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
  const fromFlags = raw.map(String);
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
export async function diffSources(options: DiffOptions, ports: DiffPorts): Promise<DiffSourcesResult> {
  const sides = {
    from: classifySide(options.from, 'from', options.config, options.cwd),
    to: classifySide(options.to, 'to', options.config, options.cwd),
  };
  const catalog = await loadShippedCatalog(options.schemas);
  const [fromRead, toRead, found] = await readBothSides(sides, ports, options.ignoreFields, catalog);
  const from: SideContent = { ...fromRead, count: found.counts.from };
  const to: SideContent = { ...toRead, count: found.counts.to };
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
 * Read an environment's connections (the streamed export) into `onEntry`, then its scan profiles, which
 * name their connections by id (an element that is no connection's `_id` stays as it is: real profiles
 * often list names). A service without the profiles endpoint (404) has none.
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
    const profiles = (await listScanProfiles(client, { signal, ifServed: true }))
      .filter((p) => typeof p.name === 'string')
      .map((p) => toComparableProfile(p, nameDataSources(p, nameById), isProfileServerField));
    return { profiles, label: `${environment.label} (environment)` };
  });
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

/** A snapshot side read and checked whole into `differ`, each connection waiting as a way to read it again. */
function readSnapshotInto(
  differ: StreamingDiff,
  flag: 'from' | 'to',
  side: Extract<DiffSide, { kind: 'snapshot' }>,
  signal: AbortSignal,
): Promise<IndexedSnapshot> {
  return indexSnapshot(
    side.path,
    ({ entry, place }, file) => differ.add(flag, entry, () => file.reread(place)),
    {
      label: side.ref,
      signal,
      // Four times the import's hold, a 100 000-connection snapshot (76 MB) included: the diff holds
      // little else, and a read from the file per connection costs more than the connection's parse.
      holdForRereadsUpTo: 4 * HOLD_FOR_REREADS_BYTES,
    },
  );
}

/**
 * Read both sides and compare them: two snapshots side by side ({@link mergeTwoSnapshots}); otherwise
 * into the streaming differ, a snapshot side first, read and checked whole (a damaged one fails before
 * an environment is contacted; each of its connections waits as a way to read it again from the file),
 * then the environments at once, the first failure stopping the other.
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
  // A snapshot side is read whole first: the environment's connections without a twin in it keep
  // only their name and type.
  const snapshotFlag = from.kind === 'snapshot' ? 'from' : to.kind === 'snapshot' ? 'to' : undefined;
  const differ = createStreamingDiff({ ...compare, complete: snapshotFlag });
  const snapshot =
    from.kind === 'snapshot'
      ? await readSnapshotInto(differ, 'from', from, ports.signal)
      : to.kind === 'snapshot'
        ? await readSnapshotInto(differ, 'to', to, ports.signal)
        : undefined;
  // Ctrl-C, or the other side's failure.
  const stop = new AbortController();
  const signal = AbortSignal.any([ports.signal, stop.signal]);
  const read = async (flag: 'from' | 'to'): Promise<SideRead> => {
    const side = sides[flag];
    if (side.kind === 'snapshot') return snapshotSideOf(side, snapshot?.profiles ?? []);
    try {
      return await readEnvironmentSide(flag, ports, signal, (entry) => differ.add(flag, entry));
    } catch (error) {
      stop.abort(error);
      throw error;
    }
  };
  const reading = [read('from'), read('to')] as const;
  try {
    const [fromRead, toRead] = await Promise.all(reading);
    return [fromRead, toRead, differ.finish()];
  } finally {
    await Promise.allSettled(reading);
    snapshot?.file.close();
  }
}
