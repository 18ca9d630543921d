/**
 * The diff workflow: two snapshots merge-joined in name order (`src/diff/merged.ts`); otherwise the
 * streaming differ (`src/diff/stream.ts`), a snapshot side read and checked whole before any environment
 * is contacted. Nothing is returned until both sides are read and checked: never half a plan.
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
import { createStreamingDiff, type StreamingDiffResult } from '../diff/stream.js';
import type { DiffResult } from '../diff/types.js';
import { ConfigError, InputFileError, UsageError } from '../errors.js';
import { snapshotScope } from '../importer/selection.js';
import type { Connection } from '../model/connection.js';
import type { SnapshotScanProfile } from '../model/scan-profile.js';
import { isProfileServerField } from '../profiles/server-fields.js';
import { loadShippedCatalog, type TemplateCatalog } from '../schema/catalog.js';
import { mergeSnapshots } from '../snapshot/merge.js';
import { HOLD_FOR_REREADS_BYTES } from '../snapshot/placed.js';
import { indexSnapshot } from '../snapshot/read.js';

export type DiffSide =
  | { readonly kind: 'environment'; readonly ref: string }
  | { readonly kind: 'snapshot'; readonly path: string; readonly ref: string };

/**
 * Whether `--from`/`--to` is an environment (a URL, then a config name: `./prod` for a file called
 * `prod`) or a snapshot (an existing file, or a path ending in `.jsonl`).
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

/** The config file's `diff.ignoreFields`, then every `--ignore-field` (a bad one: ConfigError, UsageError). */
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

/** What {@link diffSources} compares: `from`, `to` as typed (`--from` classified first); `schemas` absolute. */
export interface DiffOptions {
  readonly from: string;
  readonly to: string;
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
  /** Called only for an environment side. */
  readonly resolveEnvironment: (flag: 'from' | 'to') => Promise<ResolvedEnvironment>;
  readonly createClient: ClientFactory;
  readonly signal: AbortSignal;
}

interface SideRead {
  /** `dataSourceList` as connection names; empty for a snapshot without profiles. */
  readonly profiles: ComparableProfile[];
  /** `<file> (snapshot)` or `<environment> (environment)`. */
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

/** Read both sides and compare them as they come, never holding both whole (see the module comment). */
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

/** An environment's streamed export into `onEntry`, then its scan profiles (if served and `profiles`). */
async function readEnvironmentSide(
  flag: 'from' | 'to',
  ports: DiffPorts,
  signal: AbortSignal,
  onEntry: (entry: Connection) => void,
  withProfiles = true,
): Promise<SideRead> {
  const resolveEnvironment = () => ports.resolveEnvironment(flag);
  return withClient({ ...ports, resolveEnvironment }, async (client, environment) => {
    const nameById = new Map<string, string>();
    for await (const entry of exportConnections(client, { signal })) {
      if (typeof entry._id === 'string') nameById.set(entry._id, entry.name);
      onEntry(entry);
    }
    if (!withProfiles) return { profiles: [], label: `${environment.label} (environment)` };
    const profiles = (await listScanProfiles(client, { signal, ifServed: true }))
      .filter((p) => typeof p.name === 'string')
      .map((p) => toComparableProfile(p, nameDataSources(p, nameById), isProfileServerField));
    return { profiles, label: `${environment.label} (environment)` };
  });
}

/** A snapshot side first, read and checked whole; then environments at once, a failure stopping both. */
async function readBothSides(
  sides: { readonly from: DiffSide; readonly to: DiffSide },
  ports: DiffPorts,
  ignoreFields: readonly string[],
  catalog: TemplateCatalog,
): Promise<[SideRead, SideRead, StreamingDiffResult]> {
  const { from, to } = sides;
  const compare = { ignoreFields, secretFields: (type: string) => catalog.secretFields(type) };
  if (from.kind === 'snapshot' && to.kind === 'snapshot') {
    // Merge-joined in name order: byte-equal lines parsed once, not compared field by field.
    const merged = createMergedDiff(compare);
    const read = await mergeSnapshots(
      { path: from.path, label: from.ref },
      { path: to.path, label: to.ref },
      merged,
      { signal: ports.signal },
    );
    return [snapshotSideOf(from, read.from.profiles), snapshotSideOf(to, read.to.profiles), merged.finish()];
  }
  // A snapshot side is read whole first: environment connections without a twin in it keep only name, type.
  const snapshotFlag = from.kind === 'snapshot' ? 'from' : to.kind === 'snapshot' ? 'to' : undefined;
  const differ = createStreamingDiff({ ...compare, complete: snapshotFlag });
  const snapshotSide = snapshotFlag === undefined ? undefined : sides[snapshotFlag];
  const snapshot =
    snapshotFlag === undefined || snapshotSide?.kind !== 'snapshot'
      ? undefined
      : await indexSnapshot(
          snapshotSide.path,
          ({ entry, place }, file) => differ.add(snapshotFlag, entry, () => file.reread(place)),
          {
            label: snapshotSide.ref,
            signal: ports.signal,
            // Four times the import's hold, a 100 000-connection snapshot (76 MB) included: the diff
            // holds little else, and a read from the file per connection costs more than its parse.
            holdForRereadsUpTo: 4 * HOLD_FOR_REREADS_BYTES,
          },
        );
  const stop = new AbortController();
  const signal = AbortSignal.any([ports.signal, stop.signal]);
  // Against a snapshot, within its parts and selection, as `import --prune` deletes.
  const header = snapshot?.verified.header;
  const scope = header && snapshotScope(header.selection);
  const withConnections = header?.include.includes('connections') ?? true;
  const withProfiles = header?.include.includes('scanProfiles') ?? true;
  const read = async (flag: 'from' | 'to'): Promise<SideRead> => {
    const side = sides[flag];
    if (side.kind === 'snapshot') return snapshotSideOf(side, snapshot?.profiles ?? []);
    const add = (entry: Connection) => {
      if (withConnections && (scope?.has(entry.name, entry.type) ?? true)) differ.add(flag, entry);
    };
    try {
      return await readEnvironmentSide(flag, ports, signal, add, withProfiles);
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
