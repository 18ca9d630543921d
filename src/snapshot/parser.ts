/**
 * The checks of one pass over a snapshot, shared by every reader: header (version 1 migrated), entries, scan
 * profile lines, checksum, trailer. Strict name order puts a duplicate by its twin: one name is kept.
 */

import { compareNames } from '../connections/match.js';
import { InputFileError } from '../errors.js';
import { MAX_JSON_DEPTH, nestsTooDeep } from '../json-depth.js';
import type { Connection } from '../model/connection.js';
import type { ScanProfile, SnapshotScanProfile } from '../model/scan-profile.js';
import { isRecord } from '../own-property.js';
import { describeJsonError } from '../secrets.js';
import { createEntryHasher, type EntryHasher } from './checksum.js';
import {
  CURRENT_FORMAT_VERSION,
  createSnapshotHeader,
  SNAPSHOT_END_KIND,
  SNAPSHOT_KIND,
  SNAPSHOT_PARTS,
  type SnapshotHeader,
  type SnapshotPart,
  type SnapshotSelection,
  type SnapshotSource,
} from './format.js';
import { DAMAGED_HINT, type RawLine } from './lines.js';
import { NOT_A_SNAPSHOT_HINT } from './source.js';

/** A verified snapshot's facts; its header migrated to {@link CURRENT_FORMAT_VERSION}. */
export interface VerifiedSnapshot {
  readonly path: string;
  readonly header: SnapshotHeader;
  /** The version the file was written in. */
  readonly storedFormatVersion: number;
  /** Connections (the trailer's `entryCount` also counts the scan profiles). */
  readonly entryCount: number;
  readonly scanProfileCount: number;
  readonly sha256: string;
  /** Entries of each type, in first-seen order. */
  readonly typeCounts: ReadonlyMap<string, number>;
}

export type ParsedLine =
  | { readonly kind: 'connection'; readonly entry: Connection }
  | { readonly kind: 'scan-profile'; readonly profile: SnapshotScanProfile };

/** The state of one pass over a snapshot. Push lines in order, then `finish`. */
export class SnapshotParser {
  private header: SnapshotHeader | undefined;
  private storedFormatVersion = 0;
  private readonly hasher: EntryHasher = createEntryHasher();
  private count = 0;
  private previousName: string | undefined;
  private previousLine = 0;
  private trailer: { entryCount: number; sha256: string; line: number } | undefined;
  private lastLine = 0;
  private readonly typeCounts = new Map<string, number>();
  private profileCount = 0;
  private previousProfile: { name: string; line: number } | undefined;

  constructor(
    private readonly path: string,
    private readonly label: string,
  ) {}

  get headerRead(): boolean {
    return this.header !== undefined;
  }

  /**
   * Take one line; returns the entry or scan profile it holds. `parsed`: the line's value, parsed from
   * byte-equal text (no format version changed entries), so only the parse is skipped.
   */
  push(raw: RawLine, parsed?: unknown): ParsedLine | undefined {
    this.checkPlace(raw);
    if (this.header === undefined) {
      this.readHeader(raw);
      return undefined;
    }
    const value = parsed === undefined ? this.parseJson(raw) : parsed;
    // A scan profile line wraps its profile one level deep.
    const object = isProfileLine(value) ? value.scanProfile : value;
    if (nestsTooDeep(object, raw.bytes.length)) {
      throw this.fail(raw.number, `a value nested more than ${MAX_JSON_DEPTH} levels deep`);
    }
    if (isRecord(value) && value.kind === SNAPSHOT_END_KIND && !Object.hasOwn(value, 'name')) {
      this.readTrailer(value, raw.number);
      return undefined;
    }
    if (this.storedFormatVersion >= 2 && isProfileLine(value)) {
      return { kind: 'scan-profile', profile: this.readProfile(value, raw) };
    }
    return { kind: 'connection', entry: this.readEntry(value, raw) };
  }

  private checkPlace(raw: RawLine): void {
    this.lastLine = raw.number;
    if (this.trailer !== undefined) {
      throw this.fail(raw.number, `unexpected content after the trailer (line ${this.trailer.line})`);
    }
    if (!raw.terminated) {
      throw this.fail(raw.number, 'the last line is incomplete (no newline): the snapshot is truncated');
    }
  }

  /** An entry line read again (`placed.ts`): parsed, not re-checked. */
  reparse(bytes: Buffer, line: number): Connection {
    return this.parseJson({ bytes, number: line, offset: 0, terminated: true }) as Connection;
  }

  finish(): VerifiedSnapshot {
    if (this.header === undefined) {
      throw new InputFileError(this.label, undefined, 'the file is empty, not a snapshot', {
        hint: NOT_A_SNAPSHOT_HINT,
      });
    }
    if (this.trailer === undefined) {
      throw this.fail(this.lastLine + 1, `no trailer after line ${this.lastLine}: the snapshot is truncated`);
    }
    return {
      path: this.path,
      header: this.header,
      storedFormatVersion: this.storedFormatVersion,
      entryCount: this.count,
      scanProfileCount: this.profileCount,
      sha256: this.trailer.sha256,
      typeCounts: this.typeCounts,
    };
  }

  private readHeader(raw: RawLine): void {
    let bytes = raw.bytes;
    // A byte-order mark added by an editor: the header is not checksummed, so it is harmless.
    if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
    const notSnapshot = (why: string) =>
      new InputFileError(this.label, raw.number, `not a dds-migrate snapshot${why}`, {
        hint: NOT_A_SNAPSHOT_HINT,
      });
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8'));
    } catch {
      throw notSnapshot(' (line 1 is not a JSON header)');
    }
    if (!isRecord(value) || typeof value.kind !== 'string') throw notSnapshot(' (line 1 has no "kind")');
    if (value.kind !== SNAPSHOT_KIND) {
      throw notSnapshot(`: kind is ${JSON.stringify(value.kind)}, expected "${SNAPSHOT_KIND}"`);
    }
    const version = value.formatVersion;
    if (typeof version !== 'number' || !Number.isInteger(version) || version < 0) {
      throw this.fail(raw.number, `formatVersion must be an integer >= 0, got ${JSON.stringify(version)}`);
    }
    if (version > CURRENT_FORMAT_VERSION) {
      throw new InputFileError(
        this.label,
        raw.number,
        `formatVersion ${version} is newer than this dds-migrate reads (${CURRENT_FORMAT_VERSION})`,
        { hint: 'Upgrade dds-migrate to read this snapshot' },
      );
    }
    if (version < 1) {
      throw new InputFileError(this.label, raw.number, `formatVersion ${version} is no longer supported`, {
        hint: 'Export the snapshot again with this dds-migrate',
      });
    }
    this.storedFormatVersion = version;
    // Version 1 has no profiles and no `include`; its entry lines are as in version 2.
    const migrated = version === 1 ? { ...value, include: ['connections'] } : value;
    const problem = describeHeaderProblem(migrated);
    if (problem !== undefined) throw this.fail(raw.number, `bad snapshot header: ${problem}`);
    // Rebuilt: an older version may omit a `null` selection field.
    this.header = createSnapshotHeader({
      tool: migrated.tool as string,
      source: migrated.source as SnapshotSource,
      selection: migrated.selection as Partial<SnapshotSelection>,
      include: migrated.include as SnapshotPart[],
      createdAt: migrated.createdAt as string,
    });
  }

  private readTrailer(value: Record<string, unknown>, line: number): void {
    const { entryCount, sha256 } = value;
    if (typeof entryCount !== 'number' || !Number.isInteger(entryCount) || entryCount < 0) {
      throw this.fail(line, `trailer entryCount must be an integer >= 0, got ${JSON.stringify(entryCount)}`);
    }
    if (typeof sha256 !== 'string') throw this.fail(line, 'trailer has no sha256');
    const total = this.count + this.profileCount;
    if (entryCount !== total) {
      throw this.fail(line, `trailer says ${entryCount} entries but the snapshot holds ${total}`);
    }
    const actual = this.hasher.digest();
    if (sha256 !== actual) {
      throw this.fail(line, 'sha256 in the trailer does not match the entries (the snapshot was changed)');
    }
    if (this.storedFormatVersion >= 2) {
      const counts: [string, unknown, number][] = [
        ['connectionCount', value.connectionCount, this.count],
        ['scanProfileCount', value.scanProfileCount, this.profileCount],
      ];
      for (const [field, stated, actual] of counts) {
        if (stated !== actual) {
          throw this.fail(
            line,
            `trailer ${field} is ${JSON.stringify(stated ?? null)} but the snapshot holds ${actual}`,
          );
        }
      }
    }
    this.trailer = { entryCount, sha256, line };
  }

  private readEntry(value: unknown, raw: RawLine): Connection {
    const line = raw.number;
    if (this.previousProfile !== undefined) {
      throw this.fail(
        line,
        `a connection line after the scan profiles (line ${this.previousProfile.line}): connections come first`,
      );
    }
    if (!isRecord(value)) throw this.fail(line, 'entry is not a JSON object');
    const { name, type } = value;
    this.hasher.addLine(raw.bytes);
    this.count += 1;
    if (typeof name !== 'string' || name === '') throw this.fail(line, 'entry has no string "name"');
    if (typeof type !== 'string' || type === '') {
      throw this.fail(line, `entry ${JSON.stringify(name)} has no string "type"`);
    }
    if (this.previousName !== undefined)
      this.checkOrder('entries', 'name', this.previousName, this.previousLine, name, line);
    this.previousName = name;
    this.previousLine = line;
    this.typeCounts.set(type, (this.typeCounts.get(type) ?? 0) + 1);
    return value as Connection;
  }

  private readProfile(value: Record<string, unknown>, raw: RawLine): SnapshotScanProfile {
    const line = raw.number;
    if (this.header?.include.includes('scanProfiles') !== true) {
      throw this.fail(line, 'a scan profile line, but the header does not include "scanProfiles"');
    }
    this.hasher.addLine(raw.bytes);
    this.profileCount += 1;
    const problem = describeProfileProblem(value);
    if (problem !== undefined) throw this.fail(line, `scan profile ${problem}`);
    const profile = value.scanProfile as ScanProfile;
    const name = profile.name;
    const previous = this.previousProfile;
    if (previous !== undefined)
      this.checkOrder('scan profiles', 'scan profile name', previous.name, previous.line, name, line);
    this.previousProfile = { name, line };
    return { scanProfile: profile, dataSourceNames: value.dataSourceNames as (string | null)[] };
  }

  private checkOrder(
    what: 'entries' | 'scan profiles',
    nameWord: string,
    previous: string,
    previousLine: number,
    name: string,
    line: number,
  ): void {
    const order = compareNames(previous, name);
    if (order === 0)
      throw this.fail(line, `duplicate ${nameWord} ${JSON.stringify(name)} (also on line ${previousLine})`);
    if (order > 0) {
      throw this.fail(
        line,
        `${what} are not sorted by name: ${JSON.stringify(name)} comes after ${JSON.stringify(previous)}`,
      );
    }
  }

  private parseJson(raw: RawLine): unknown {
    try {
      return JSON.parse(raw.bytes.toString('utf8'));
    } catch (error) {
      throw this.fail(raw.number, `not valid JSON (${describeJsonError(error)})`);
    }
  }

  private fail(line: number, message: string): InputFileError {
    return new InputFileError(this.label, line, message, { hint: DAMAGED_HINT });
  }
}

/** A scan profile line: no top-level `name` (every connection has one) and a `scanProfile` key. */
function isProfileLine(value: unknown): value is Record<string, unknown> {
  return isRecord(value) && !Object.hasOwn(value, 'name') && Object.hasOwn(value, 'scanProfile');
}

function describeProfileProblem(value: Record<string, unknown>): string | undefined {
  const profile = value.scanProfile;
  if (!isRecord(profile)) return '"scanProfile" is not an object';
  if (typeof profile.name !== 'string' || profile.name === '') return 'has no string "name"';
  const label = JSON.stringify(profile.name);
  const list = profile.dataSourceList;
  if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) {
    return `${label}: "dataSourceList" is not a list of strings`;
  }
  const names = value.dataSourceNames;
  if (!Array.isArray(names) || !names.every((x) => x === null || typeof x === 'string')) {
    return `${label}: "dataSourceNames" is not a list of strings or nulls`;
  }
  if (names.length !== list.length) {
    return `${label}: "dataSourceNames" has ${names.length} elements, "dataSourceList" ${list.length}`;
  }
  return undefined;
}

function isStringArrayOrNull(value: unknown): value is readonly string[] | null {
  return value === null || (Array.isArray(value) && value.every((v) => typeof v === 'string'));
}

function describeHeaderProblem(h: Record<string, unknown>): string | undefined {
  if (typeof h.createdAt !== 'string') return 'createdAt must be a string';
  if (typeof h.tool !== 'string') return 'tool must be a string';
  const source = h.source;
  if (!isRecord(source) || typeof source.url !== 'string' || typeof source.environment !== 'string') {
    return 'source must be {url, environment} strings';
  }
  const selection = h.selection as Partial<SnapshotSelection> | undefined;
  if (!isRecord(selection)) return 'selection must be an object';
  if (!isStringArrayOrNull(selection.ids ?? null)) return 'selection.ids must be a list of strings or null';
  if (!isStringArrayOrNull(selection.types ?? null))
    return 'selection.types must be a list of strings or null';
  const name = selection.name ?? null;
  if (name !== null && typeof name !== 'string') return 'selection.name must be a string or null';
  const include = h.include;
  if (
    !Array.isArray(include) ||
    include.length === 0 ||
    !include.every((p) => SNAPSHOT_PARTS.includes(p as SnapshotPart))
  ) {
    return `include must be a non-empty list of ${SNAPSHOT_PARTS.map((p) => JSON.stringify(p)).join(', ')}`;
  }
  return undefined;
}
