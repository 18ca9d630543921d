/**
 * The emulator's data: connections, scan profiles, cases, started scans and the case audit trail,
 * with real (clear) secret values. Persistence writes the whole state atomically (tmp + rename).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { caseKeyOf } from './deployment.js';
import { isObjectId, stableObjectId } from './ids.js';
import type {
  CaseAuditEntry,
  ConnectionRecord,
  CredentialRecord,
  EmulatorSeed,
  EmulatorStore,
  ScannerRecord,
  ScanProfileRecord,
  ScanTemplate,
  SecurityCaseRecord,
  StartedScan,
} from './types.js';

/** Scan templates every emulator knows, so profiles can be created against an empty seed. */
export const DEFAULT_SCAN_TEMPLATES: readonly ScanTemplate[] = [
  { _id: '64b7f0c2a1d3e4f5a6b7c801', name: 'Full Scan' },
  { _id: '64b7f0c2a1d3e4f5a6b7c802', name: 'Metadata Only' },
  { _id: '64b7f0c2a1d3e4f5a6b7c803', name: 'PII Sample Scan' },
  { _id: '64b7f0c2a1d3e4f5a6b7c804', name: 'Credit Card (PCI) Scan' },
];

function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Scanners of a seed without `scanners`: one per `scanner_group` its connections use, plus `default`. */
function defaultScanners(connections: readonly Record<string, unknown>[]): ScannerRecord[] {
  const groups = new Set<string>(['default']);
  for (const c of connections) {
    if (typeof c.scanner_group === 'string' && c.scanner_group !== '') groups.add(c.scanner_group);
  }
  return [...groups].map((group) => ({ name: `${group}-scanner-1`, scanner_group: group, status: 'online' }));
}

/** Credentials of a seed without `credentials`: one per `credential_id` its connections reference. */
function defaultCredentials(connections: readonly Record<string, unknown>[]): CredentialRecord[] {
  const ids = new Set<string>();
  for (const c of connections) {
    if (typeof c.credential_id === 'string' && c.credential_id !== '') ids.add(c.credential_id);
  }
  return [...ids].map((id) => ({ credential_id: id, username: `${id}-user`, password: `${id}-Secret!1` }));
}

/** The in-memory store. */
export class MemoryStore implements EmulatorStore {
  private readonly byName = new Map<string, ConnectionRecord>();
  private readonly connectionIds = new Map<string, ConnectionRecord>();
  private readonly profileList: ScanProfileRecord[] = [];
  private readonly profileById = new Map<string, ScanProfileRecord>();
  private readonly caseList: SecurityCaseRecord[] = [];
  private readonly caseById = new Map<string, SecurityCaseRecord>();
  private readonly started: StartedScan[] = [];
  private readonly audit: CaseAuditEntry[] = [];
  private readonly templates: ScanTemplate[];
  private readonly scannerList: ScannerRecord[];
  private readonly credentialList: CredentialRecord[];
  private testFailures: Set<string>;

  /** `copy: false` adopts the seed's objects (a freshly parsed file: cloning 100k connections costs seconds). */
  constructor(seed: EmulatorSeed = {}, copy = true) {
    const s = copy ? clone(seed) : seed;
    for (const c of s.connections ?? []) {
      if (this.byName.has(c.name)) throw new Error(`seed: duplicate connection name '${c.name}'`);
      const _id = isObjectId(c._id) ? c._id : stableObjectId(`connection:${c.name}`);
      this.putConnection({ ...c, _id } as ConnectionRecord);
    }
    for (const p of s.scanProfiles ?? []) {
      const name = typeof p.name === 'string' ? p.name : '';
      const _id = isObjectId(p._id) ? p._id : stableObjectId(`profile:${name}`);
      this.putProfile({ ...p, _id } as ScanProfileRecord);
    }
    for (const c of s.cases ?? []) {
      const caseStatus = c.caseStatus ?? 'open';
      let record: SecurityCaseRecord;
      if (typeof c._id === 'string') {
        record = { ...c, caseStatus };
      } else {
        const id = String(c.caseId ?? c.id);
        record = { ...c, id, caseId: id, caseStatus };
      }
      this.caseList.push(record);
      this.caseById.set(caseKeyOf(record), record);
    }
    const known = new Map(DEFAULT_SCAN_TEMPLATES.map((t) => [t._id, t]));
    for (const t of s.scanTemplates ?? []) known.set(t._id, t);
    this.templates = [...known.values()];
    this.started.push(...(s.scansStarted ?? []));
    this.audit.push(...(s.caseAudit ?? []));
    this.scannerList = s.scanners ?? defaultScanners(s.connections ?? []);
    this.credentialList = s.credentials ?? defaultCredentials(s.connections ?? []);
    this.testFailures = new Set(s.connectionTestFailures ?? []);
  }

  get connections(): readonly ConnectionRecord[] {
    return [...this.byName.values()];
  }

  /** Live iteration without a copy (listing 100k connections page by page). */
  connectionValues(): IterableIterator<ConnectionRecord> {
    return this.byName.values();
  }

  get connectionCount(): number {
    return this.byName.size;
  }

  getConnection(name: string): ConnectionRecord | undefined {
    return this.byName.get(name);
  }

  getConnectionById(id: string): ConnectionRecord | undefined {
    return this.connectionIds.get(id);
  }

  /** Insert a new connection (the caller checked the name is free). */
  putConnection(conn: ConnectionRecord): void {
    this.byName.set(conn.name, conn);
    this.connectionIds.set(conn._id, conn);
  }

  /**
   * Replace the connection stored under `oldName` by `conn` (same `_id`). A new name keeps the
   * connection's place in the creation order only when it is unchanged.
   */
  replaceConnection(oldName: string, conn: ConnectionRecord): void {
    const old = this.byName.get(oldName);
    if (old !== undefined) this.connectionIds.delete(old._id);
    if (oldName !== conn.name) this.byName.delete(oldName);
    this.putConnection(conn);
  }

  /** Remove a connection; false when there was none of that name. */
  deleteConnection(name: string): boolean {
    const old = this.byName.get(name);
    if (old === undefined) return false;
    this.byName.delete(name);
    this.connectionIds.delete(old._id);
    return true;
  }

  /** Whether `ds-connection-test` of `name` fails. */
  isTestFailure(name: string): boolean {
    return this.testFailures.has(name);
  }

  /** Replace the names whose connection test fails. */
  setTestFailures(names: Iterable<string>): void {
    this.testFailures = new Set(names);
  }

  get scanners(): readonly ScannerRecord[] {
    return this.scannerList;
  }

  get credentials(): readonly CredentialRecord[] {
    return this.credentialList;
  }

  get profiles(): readonly ScanProfileRecord[] {
    return [...this.profileList];
  }

  getProfile(id: string): ScanProfileRecord | undefined {
    return this.profileById.get(id);
  }

  getProfileByName(name: string): ScanProfileRecord | undefined {
    return this.profileList.find((p) => p.name === name);
  }

  putProfile(profile: ScanProfileRecord): void {
    this.profileList.push(profile);
    this.profileById.set(profile._id, profile);
  }

  /** Replace the profile with the same `_id`, in place (keeps the order). */
  replaceProfile(profile: ScanProfileRecord): void {
    const i = this.profileList.findIndex((p) => p._id === profile._id);
    if (i === -1) this.profileList.push(profile);
    else this.profileList[i] = profile;
    this.profileById.set(profile._id, profile);
  }

  /** Remove a profile; false when there was none with that id. */
  deleteProfile(id: string): boolean {
    const i = this.profileList.findIndex((p) => p._id === id);
    if (i === -1) return false;
    this.profileList.splice(i, 1);
    this.profileById.delete(id);
    return true;
  }

  get cases(): readonly SecurityCaseRecord[] {
    return this.caseList;
  }

  /** Case by the id its write endpoints take (`_id` when it has one, else `caseId`). */
  getCase(id: string): SecurityCaseRecord | undefined {
    return this.caseById.get(id);
  }

  /** Set one field of a case and keep the change in the audit trail. */
  updateCase(
    c: SecurityCaseRecord,
    field: string,
    value: unknown,
    reason: string | undefined,
    via: CaseAuditEntry['via'],
  ): void {
    const from = c[field];
    (c as Record<string, unknown>)[field] = value;
    c.updated_at = new Date().toISOString();
    this.audit.push({ caseId: caseKeyOf(c), field, from, to: value, reason, via, at: Date.now() });
  }

  get scansStarted(): readonly StartedScan[] {
    return this.started;
  }

  recordScan(scan: StartedScan): void {
    this.started.push(scan);
  }

  get caseAudit(): readonly CaseAuditEntry[] {
    return this.audit;
  }

  get scanTemplates(): readonly ScanTemplate[] {
    return this.templates;
  }

  isScanTemplate(id: string): boolean {
    return this.templates.some((t) => t._id === id);
  }

  toSeed(): EmulatorSeed {
    return clone(this.toSeedShallow());
  }

  /** The state for persistence, without the deep copy (serialised at once). */
  toSeedShallow(): EmulatorSeed {
    return {
      connections: [...this.byName.values()],
      scanProfiles: this.profileList,
      cases: this.caseList,
      scanTemplates: this.templates,
      scansStarted: this.started,
      caseAudit: this.audit,
      scanners: this.scannerList,
      credentials: this.credentialList,
      connectionTestFailures: [...this.testFailures],
    };
  }
}

/**
 * Writes the state file atomically after changes. Concurrent requests share writes: a caller waits
 * until a write that started after its change has finished, so an answer is only sent once the
 * change is on disk, while a burst of creates costs one or two writes, not one each.
 */
export class StatePersister {
  private readonly path: string;
  private readonly snapshot: () => EmulatorSeed;
  private writing: Promise<void> | null = null;
  private changed = 0;
  private written = 0;

  constructor(path: string, snapshot: () => EmulatorSeed) {
    this.path = path;
    this.snapshot = snapshot;
  }

  /** Note a change and resolve once it is on disk. */
  async persist(): Promise<void> {
    this.changed++;
    const target = this.changed;
    while (this.written < target) {
      if (this.writing === null) {
        this.writing = this.writeNow().finally(() => {
          this.writing = null;
        });
      }
      await this.writing;
    }
  }

  /** Wait for a write in progress. */
  async flush(): Promise<void> {
    while (this.writing !== null) await this.writing.catch(() => undefined);
  }

  private async writeNow(): Promise<void> {
    const generation = this.changed;
    const text = JSON.stringify({ kind: 'dds-migrate/emulator-state', formatVersion: 1, ...this.snapshot() });
    await mkdir(dirname(this.path), { recursive: true });
    const tmp = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const fh = await open(tmp, 'w', 0o600);
    try {
      await fh.writeFile(text, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    try {
      await rename(tmp, this.path);
    } catch (err) {
      await unlink(tmp).catch(() => undefined);
      throw err;
    }
    this.written = generation;
  }
}
