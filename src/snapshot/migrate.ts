/**
 * Format migrations: a snapshot written by an older dds-migrate is read by migrating its header and
 * each entry step by step, `v(n) -> v(n+1)`, up to {@link CURRENT_FORMAT_VERSION}. The file is never
 * rewritten: migrations apply to parsed values after the checksum was verified on the bytes as stored.
 * The trailer (`kind`, `entryCount`, `sha256` of the stored entry lines) is the same in every version.
 *
 * Shipped: version 1 -> 2 (version 2 added scan profile lines and the header's `include`; a version 1
 * snapshot holds connections only, so its header gets `include: ["connections"]` and its entries stay
 * as they are). Tests register a version 0 to keep the mechanism honest.
 */
import type { Connection } from '../model/connection.js';
import { CURRENT_FORMAT_VERSION } from './format.js';

/** One step `from -> from + 1`. Both functions are pure and get values already parsed from JSON. */
export interface SnapshotMigration {
  /** The version this step reads; it produces `from + 1`. */
  readonly from: number;
  /** Turn a header of version `from` into one of `from + 1` (including its `formatVersion`). */
  migrateHeader(header: Record<string, unknown>): Record<string, unknown>;
  /** Turn an entry of version `from` into one of `from + 1`. */
  migrateEntry(entry: Record<string, unknown>): Record<string, unknown>;
}

/** A set of migrations, at most one per `from` version. */
export interface MigrationRegistry {
  /** Add a step; a second step for the same `from` is a programming error. */
  register(migration: SnapshotMigration): void;
  /** The steps that take `version` to `target`, in order; undefined when a step is missing. */
  chain(version: number, target?: number): readonly SnapshotMigration[] | undefined;
}

/** A new, empty registry. */
export function createMigrationRegistry(migrations: readonly SnapshotMigration[] = []): MigrationRegistry {
  const steps = new Map<number, SnapshotMigration>();
  const registry: MigrationRegistry = {
    register(migration) {
      if (steps.has(migration.from)) {
        throw new Error(`A snapshot migration from version ${migration.from} is already registered`);
      }
      steps.set(migration.from, migration);
    },
    chain(version, target = CURRENT_FORMAT_VERSION) {
      const out: SnapshotMigration[] = [];
      for (let v = version; v < target; v++) {
        const step = steps.get(v);
        if (step === undefined) return undefined;
        out.push(step);
      }
      return out;
    },
  };
  for (const m of migrations) registry.register(m);
  return registry;
}

/** Version 1 -> 2: the header states that it holds connections only; entries are unchanged. */
export const migrateV1ToV2: SnapshotMigration = {
  from: 1,
  migrateHeader(header) {
    return { ...header, formatVersion: 2, include: ['connections'] };
  },
  migrateEntry(entry) {
    return entry;
  },
};

/** The migrations this build ships. */
export const shippedMigrations: MigrationRegistry = createMigrationRegistry([migrateV1ToV2]);

/** A compiled chain: apply every step to a header or an entry. */
export interface Migrator {
  /** True when the chain is empty (the snapshot is of the current version). */
  readonly identity: boolean;
  migrateHeader(header: Record<string, unknown>): Record<string, unknown>;
  migrateEntry(entry: Record<string, unknown>): Connection;
}

/** Compose a chain into one {@link Migrator}. */
export function composeMigrations(chain: readonly SnapshotMigration[]): Migrator {
  return {
    identity: chain.length === 0,
    migrateHeader(header) {
      let h = header;
      for (const step of chain) h = step.migrateHeader(h);
      return h;
    },
    migrateEntry(entry) {
      let e = entry;
      for (const step of chain) e = step.migrateEntry(e);
      return e as Connection;
    },
  };
}
