/**
 * The snapshot format (contract section 3; docs/files.md, "Snapshot"). A profile line has no top-level
 * `name`, unlike every connection line, so the two never mix. The key order (the contract asks only for "a
 * stable order") makes snapshots of the same data byte-identical, so a plain `diff` of two is meaningful.
 */
import { compareNames } from '../connections/match.js';
import type { Connection } from '../model/connection.js';
import type { SnapshotScanProfile } from '../model/scan-profile.js';
import { assignOwn } from '../own-property.js';

/** `kind` of the header line. */
export const SNAPSHOT_KIND = 'dds-migrate/snapshot';
/** `kind` of the trailer line. */
export const SNAPSHOT_END_KIND = 'dds-migrate/snapshot-end';
/** The format version this build writes. A version 1 header is migrated on read (`parser.ts`). */
export const CURRENT_FORMAT_VERSION = 2;

/** What a snapshot holds (header `include`). */
export type SnapshotPart = 'connections' | 'scanProfiles';

/** Every part, in the order the header lists them. */
export const SNAPSHOT_PARTS: readonly SnapshotPart[] = ['connections', 'scanProfiles'];

/** What was asked for when the snapshot was taken (`null`: no restriction of that kind). */
export interface SnapshotSelection {
  readonly ids: readonly string[] | null;
  readonly types: readonly string[] | null;
  readonly name: string | null;
}

/** Where the snapshot came from. `url` never carries a token. */
export interface SnapshotSource {
  readonly url: string;
  readonly environment: string;
}

/** Line 1 of a snapshot. */
export interface SnapshotHeader {
  readonly kind: typeof SNAPSHOT_KIND;
  readonly formatVersion: number;
  /** ISO 8601 UTC. */
  readonly createdAt: string;
  readonly tool: string;
  readonly source: SnapshotSource;
  readonly selection: SnapshotSelection;
  /** Without `scanProfiles` the snapshot says nothing about profiles: an import creates and prunes none. */
  readonly include: readonly SnapshotPart[];
}

/** The last line of a snapshot. */
export interface SnapshotTrailer {
  readonly kind: typeof SNAPSHOT_END_KIND;
  /** Connection and scan profile lines. */
  readonly entryCount: number;
  readonly connectionCount?: number;
  readonly scanProfileCount?: number;
  /** Lower-case hex sha256 of the entry lines, each with its `\n`. */
  readonly sha256: string;
}

export interface SnapshotHeaderInput {
  readonly tool: string;
  readonly source: SnapshotSource;
  readonly selection?: Partial<SnapshotSelection>;
  /** Default: connections only. */
  readonly include?: readonly SnapshotPart[];
  /** Default: now; a string is kept as it is. */
  readonly createdAt?: Date | string;
}

/** Build a header of the current format version, keys in the contract's order. */
export function createSnapshotHeader(input: SnapshotHeaderInput): SnapshotHeader {
  return {
    kind: SNAPSHOT_KIND,
    formatVersion: CURRENT_FORMAT_VERSION,
    createdAt:
      typeof input.createdAt === 'string' ? input.createdAt : (input.createdAt ?? new Date()).toISOString(),
    tool: input.tool,
    source: { url: input.source.url, environment: input.source.environment },
    selection: {
      ids: input.selection?.ids ?? null,
      types: input.selection?.types ?? null,
      name: input.selection?.name ?? null,
    },
    include: orderParts(input.include ?? ['connections']),
  };
}

/** `parts` without repeats, in {@link SNAPSHOT_PARTS} order. */
export function orderParts(parts: readonly SnapshotPart[]): SnapshotPart[] {
  return SNAPSHOT_PARTS.filter((p) => parts.includes(p));
}

/** The header as its line (without the newline); its builders put its keys in the contract's order. */
export function serializeHeaderLine(header: SnapshotHeader): string {
  return JSON.stringify(header);
}

/** The trailer as its line (without the newline). */
export function serializeTrailerLine(trailer: Omit<SnapshotTrailer, 'kind'>): string {
  const t: SnapshotTrailer = {
    kind: SNAPSHOT_END_KIND,
    entryCount: trailer.entryCount,
    ...(trailer.connectionCount === undefined ? {} : { connectionCount: trailer.connectionCount }),
    ...(trailer.scanProfileCount === undefined ? {} : { scanProfileCount: trailer.scanProfileCount }),
    sha256: trailer.sha256,
  };
  return JSON.stringify(t);
}

/** Keys that lead every entry line, in this order. */
export const LEADING_ENTRY_KEYS: readonly string[] = ['_id', 'name', 'type'];

/** A copy with the keys in the stable order: `_id`, `name`, `type`, then (nested too) code-unit order. */
export function canonicalizeEntry<T extends Record<string, unknown>>(entry: T): T {
  const out: Record<string, unknown> = {};
  const keys = Object.keys(entry);
  for (const lead of LEADING_ENTRY_KEYS) {
    if (Object.hasOwn(entry, lead)) assignOwn(out, lead, canonicalizeValue(entry[lead]));
  }
  const rest = keys.filter((k) => !LEADING_ENTRY_KEYS.includes(k)).sort(compareNames);
  for (const key of rest) assignOwn(out, key, canonicalizeValue(entry[key]));
  return out as T;
}

function canonicalizeValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonicalizeValue);
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(obj).sort(compareNames)) assignOwn(out, key, canonicalizeValue(obj[key]));
    return out;
  }
  return value;
}

/** One entry as its line (without the newline): canonical key order, compact JSON. */
export function serializeEntryLine(entry: Connection): string {
  return JSON.stringify(canonicalizeEntry(entry as Record<string, unknown>));
}

/** One scan profile as its line (without the newline), the profile's keys in the entry order. */
export function serializeProfileLine(entry: SnapshotScanProfile): string {
  return JSON.stringify({
    scanProfile: canonicalizeEntry(entry.scanProfile as Record<string, unknown>),
    dataSourceNames: [...entry.dataSourceNames],
  });
}
