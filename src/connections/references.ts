/**
 * What a connection refers to (api-notes, "Connection objects" [seen]): scanner group, credential, certificate
 * (a flag left out counts as "in use"), source-environment ids (never sent as is); unlistable ones only warn.
 */
import { countOf } from '../display-name.js';
import type { Problem } from '../model/problem.js';
import { compareNames } from './match.js';

/** The objects of the target one connection needs. */
export interface ConnectionReferences {
  readonly scannerGroup: string;
  readonly credentialId: string | undefined;
  readonly certificateId: string | undefined;
}

/** The scanner group of a connection without `scanner_group` (api-notes). */
const DEFAULT_SCANNER_GROUP = 'default';

function isExplicitlyOff(flag: unknown): boolean {
  return flag === false || (typeof flag === 'string' && flag.trim().toLowerCase() === 'false');
}

function readId(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** What `body` (a connection, overrides applied) needs in its target. */
export function readReferences(body: Readonly<Record<string, unknown>>): ConnectionReferences {
  const group = readId(body.scanner_group);
  const credentialId = readId(body.credential_id);
  const certificateId = readId(body.certificate_id);
  return {
    scannerGroup: group ?? DEFAULT_SCANNER_GROUP,
    credentialId:
      credentialId !== undefined && !isExplicitlyOff(body.is_credential) ? credentialId : undefined,
    certificateId:
      certificateId !== undefined && !isExplicitlyOff(body.is_certificate) ? certificateId : undefined,
  };
}

/** What the target holds of one kind: its names, or it cannot be asked (the look-up answered 404). */
export type TargetNames =
  | { readonly kind: 'available'; readonly names: ReadonlySet<string> }
  | { readonly kind: 'not-available' };

export interface TargetReferences {
  readonly scannerGroups: TargetNames;
  readonly credentials: TargetNames;
}

export interface ReferencingEntry {
  readonly name: string;
  readonly type: string;
  readonly body: Readonly<Record<string, unknown>>;
}

/** The JSON pointers of the problems {@link checkEntryReferences} reports. */
export const REFERENCE_POINTERS: ReadonlySet<string> = new Set(['/scanner_group', '/credential_id']);

const LACKING = {
  scannerGroup: (group: string) => ({
    path: '/scanner_group',
    message: `scanner group "${group}" has no scanner in the target`,
  }),
  credential: (id: string) => ({
    path: '/credential_id',
    message: `stored credential "${id}" does not exist in the target`,
  }),
};

function lacks(names: TargetNames, name: string): boolean {
  return names.kind === 'available' && !names.names.has(name);
}

/** The references the target lacks (each a problem on its field): these stop an import's pre-flight. */
export function checkEntryReferences(entry: ReferencingEntry, target: TargetReferences): Problem[] {
  const refs = readReferences(entry.body);
  const lacking = [];
  if (lacks(target.scannerGroups, refs.scannerGroup)) lacking.push(LACKING.scannerGroup(refs.scannerGroup));
  if (refs.credentialId !== undefined && lacks(target.credentials, refs.credentialId))
    lacking.push(LACKING.credential(refs.credentialId));
  return lacking.map((problem) => ({ entry: entry.name, type: entry.type, ...problem }));
}

/** The problems of `needs` against `target`: one per entry and missing reference, in entry order. */
export function checkReferenceNeeds(needs: ReferenceNeeds, target: TargetReferences): Problem[] {
  const problems: Problem[] = [];
  const check = (
    names: TargetNames,
    map: ReadonlyMap<string, readonly string[]>,
    problem: (name: string) => { path: string; message: string },
  ) => {
    for (const [name, entries] of map)
      if (lacks(names, name)) for (const entry of entries) problems.push({ entry, ...problem(name) });
  };
  check(target.scannerGroups, needs.scannerGroups, LACKING.scannerGroup);
  check(target.credentials, needs.credentials, LACKING.credential);
  return problems.sort(
    (a, b) => compareNames(a.entry ?? '', b.entry ?? '') || compareNames(a.path ?? '', b.path ?? ''),
  );
}

/** Per kind, each name needed and the entries that need it (both sorted). */
export interface ReferenceNeeds {
  readonly scannerGroups: ReadonlyMap<string, readonly string[]>;
  readonly credentials: ReadonlyMap<string, readonly string[]>;
  readonly certificates: ReadonlyMap<string, readonly string[]>;
}

/** Collects {@link ReferenceNeeds} one entry at a time. */
export function createReferenceCollector(): {
  add(entry: ReferencingEntry): void;
  needs(): ReferenceNeeds;
} {
  const groups = new Map<string, string[]>();
  const credentials = new Map<string, string[]>();
  const certificates = new Map<string, string[]>();
  const push = (map: Map<string, string[]>, key: string, name: string) => {
    const list = map.get(key);
    if (list) list.push(name);
    else map.set(key, [name]);
  };
  const sorted = (map: Map<string, string[]>) =>
    new Map([...map].sort(([a], [b]) => compareNames(a, b)).map(([k, v]) => [k, [...v].sort(compareNames)]));
  return {
    add(entry) {
      const refs = readReferences(entry.body);
      push(groups, refs.scannerGroup, entry.name);
      if (refs.credentialId !== undefined) push(credentials, refs.credentialId, entry.name);
      if (refs.certificateId !== undefined) push(certificates, refs.certificateId, entry.name);
    },
    needs: () => ({
      scannerGroups: sorted(groups),
      credentials: sorted(credentials),
      certificates: sorted(certificates),
    }),
  };
}

/** "the target must hold: scanner groups a, b; stored credentials x; certificates y". */
export function formatReferenceNeeds(needs: ReferenceNeeds): string {
  const parts = [
    ['scanner groups', needs.scannerGroups],
    ['stored credentials', needs.credentials],
    ['certificates', needs.certificates],
  ] as const;
  const listed = parts
    .filter(([, map]) => map.size > 0)
    .map(([label, map]) => `${label} ${[...map.keys()].join(', ')}`);
  return listed.length === 0 ? 'the target must hold nothing' : `the target must hold: ${listed.join('; ')}`;
}

/** One warning per kind the target could not list, and for certificates (never checkable). */
export function describeReferenceWarnings(needs: ReferenceNeeds, target: TargetReferences): string[] {
  const warnings: string[] = [];
  const unchecked = (label: string, what: string, map: ReadonlyMap<string, readonly string[]>) =>
    `${label} could not be checked (the target does not list ${what}): it must hold ${describeNeeded(map)}`;
  if (target.scannerGroups.kind === 'not-available' && needs.scannerGroups.size > 0) {
    warnings.push(unchecked('scanner groups', 'scanners', needs.scannerGroups));
  }
  if (target.credentials.kind === 'not-available' && needs.credentials.size > 0) {
    warnings.push(unchecked('stored credentials', 'credentials', needs.credentials));
  }
  if (needs.certificates.size > 0) {
    warnings.push(
      `certificates must exist in the target, cannot be checked: ${describeNeeded(needs.certificates)}`,
    );
  }
  return warnings;
}

/** `a (2 entries), b (x)`: each name with its entries, or their count when more than one. */
function describeNeeded(map: ReadonlyMap<string, readonly string[]>): string {
  return [...map]
    .map(([key, names]) => `${key} (${names.length === 1 ? names[0] : `${names.length} entries`})`)
    .join(', ');
}

/** Fields that hold ids of the source environment (api-notes). */
const SOURCE_ID_FIELDS = ['defaultScanProfileId', 'defaultScanId'] as const;

type SourceIdField = (typeof SOURCE_ID_FIELDS)[number];

/** A source-environment id {@link resolveSourceIds} dropped from one field. */
export interface SourceIdChange {
  readonly kind: 'dropped';
  readonly field: SourceIdField;
  readonly from: unknown;
}

/** `body` without its source-environment ids; `null` and `""` name nothing and are kept. */
export function resolveSourceIds<T extends Readonly<Record<string, unknown>>>(
  body: T,
): { readonly body: T; readonly changes: readonly SourceIdChange[] } {
  const changes: SourceIdChange[] = [];
  let out: Record<string, unknown> | undefined;
  for (const field of SOURCE_ID_FIELDS) {
    if (!Object.hasOwn(body, field)) continue;
    const value = body[field];
    if (value === null || value === '') continue;
    out ??= { ...body };
    delete out[field];
    changes.push({ kind: 'dropped', field, from: value });
  }
  return { body: (out ?? body) as T, changes };
}

/** One warning per field dropped: `defaultScanId dropped from 3 entries (a, b, c): ...`. */
export function describeSourceIdDrops(changes: ReadonlyMap<string, readonly SourceIdChange[]>): string[] {
  const byField = new Map<SourceIdField, string[]>();
  for (const [entry, list] of changes) {
    for (const change of list) {
      const names = byField.get(change.field) ?? [];
      names.push(entry);
      byField.set(change.field, names);
    }
  }
  return [...byField].map(([field, names]) => {
    const shown = names.slice(0, 5).join(', ') + (names.length > 5 ? `, ... ${names.length - 5} more` : '');
    return `${field} dropped from ${countOf(names.length, 'entry', 'entries')} (${shown}): an id of the source environment, not restored in this run (set it with --overrides to a target id)`;
  });
}
