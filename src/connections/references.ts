/**
 * What a connection refers to in its environment (api-notes, "Connection objects" [seen]), pure:
 * - `scanner_group`: scanners that must exist in the target (`"default"` when unset);
 * - `credential_id`: a stored credential (`is_credential: true`);
 * - `certificate_id`: a stored certificate (`is_certificate`);
 * - `defaultScanProfileId` / `defaultScanId`: ids of the *source* environment, meaningless in another
 *   one: remapped when the object they name is restored in the same run, otherwise dropped (never sent
 *   as they are).
 *
 * A flag left out counts as "in use" when the id is given; only an explicit `false` (or `"false"`, values
 * are mixed-typed) says the id is not used. Where the target can list a kind (scanners, credentials) a
 * missing one is a problem; where it cannot, a warning ("could not be checked"). Certificates have no
 * known list endpoint: always a warning, never a refusal.
 */
import { countOf } from '../display-name.js';
import type { Problem } from '../model/problem.js';
import { compareNames } from './match.js';

/** The objects of the target one connection needs. */
export interface ConnectionReferences {
  /** `scanner_group`, `"default"` when unset or empty. */
  readonly scannerGroup: string;
  /** The stored credential in use, if any. */
  readonly credentialId: string | undefined;
  /** The stored certificate in use, if any. */
  readonly certificateId: string | undefined;
}

/** The scanner group a connection without `scanner_group` uses (api-notes). */
export const DEFAULT_SCANNER_GROUP = 'default';

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

/** What the target holds, as far as it can be asked. */
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

/** What the problem of a reference the target lacks says, on its field. */
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

/** True when the target can be asked and does not hold `name`. */
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

/**
 * The problems of `needs` against what `target` holds: one per entry and missing reference, in entry
 * order (kinds the target cannot list are not checked: see {@link describeReferenceWarnings}).
 */
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

/** Collects {@link ReferenceNeeds} one entry at a time (validate streams its entries). */
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

/** "the target must hold: scanner groups a, b; stored credentials x; certificates y" (empty kinds left out). */
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

/**
 * The warnings of a check against `target` (one line per kind, not per entry): kinds the target could
 * not list, and certificates (never checkable).
 */
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

// ---- source-environment ids -------------------------------------------------------------------

/** Fields that hold ids of the source environment (api-notes). */
export const SOURCE_ID_FIELDS = ['defaultScanProfileId', 'defaultScanId'] as const;

export type SourceIdField = (typeof SOURCE_ID_FIELDS)[number];

/** A source-environment id {@link resolveSourceIds} dropped from one field. */
export interface SourceIdChange {
  readonly kind: 'dropped';
  readonly field: SourceIdField;
  readonly from: unknown;
}

/**
 * `body` with its source-environment ids dropped: never sent as they are (they name objects of the
 * source). `null` and `""` name nothing and are kept verbatim.
 */
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
