/**
 * Helpers of the import end-to-end tests: a snapshot taken straight from an emulator's export endpoint
 * (so these tests do not depend on the export command), and overrides that supply every masked secret
 * from environment variables.
 */
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type EmulatorSeed,
  generateConnections,
  type RunningEmulator,
  startEmulator,
} from '../../src/emulator/index.js';
import type { Connection } from '../../src/model/connection.js';
import { fixturesDir } from '../../src/paths.js';
import { MASK } from '../../src/secrets.js';
import { hashEntryLines } from '../../src/snapshot/checksum.js';
import {
  createSnapshotHeader,
  serializeEntryLine,
  serializeHeaderLine,
  serializeTrailerLine,
} from '../../src/snapshot/format.js';
import { makeTempDir } from '../helpers/temp-dir.js';

/** What {@link prepareImportSource} sets up. */
export interface ImportSource {
  /** The source emulator, holding the prod fixture (the caller closes it). */
  readonly source: RunningEmulator;
  /** A new temporary folder holding the two files below. */
  readonly dir: string;
  readonly snapshot: string;
  readonly entries: Connection[];
  /** Overrides supplying every masked secret from a variable of `secretEnv`, plus `extra`. */
  readonly overridesPath: string;
  readonly secretEnv: Record<string, string>;
}

/**
 * The shared setup of the import end-to-end tests: a source emulator with the prod fixture, its
 * snapshot in a new temporary folder (`tempPrefix`), and an overrides file next to it.
 */
export async function prepareImportSource(
  tempPrefix: string,
  extra: Readonly<Record<string, unknown>> = {},
  data: EmulatorSeed | string = join(fixturesDir(), 'environments', 'prod.json'),
): Promise<ImportSource> {
  const source = await startEmulator({ data });
  const dir = await makeTempDir(tempPrefix);
  const snapshot = join(dir, 'prod.snapshot.jsonl');
  const entries = await writeSnapshotFromEmulator(source, snapshot);
  const { overrides, env } = buildSecretOverrides(
    entries,
    (name, field) => source.store.getConnection(name)?.[field],
  );
  const overridesPath = join(dir, 'overrides.json');
  await writeFile(overridesPath, JSON.stringify({ ...extra, ...overrides }, null, 2));
  return { source, dir, snapshot, entries, overridesPath, secretEnv: env };
}

/** Fetch the emulator's export (secrets masked, as a real one) and write it as a snapshot. */
export async function writeSnapshotFromEmulator(
  emu: RunningEmulator,
  path: string,
  options: { readonly sourceUrl?: string; readonly only?: (c: Connection) => boolean } = {},
): Promise<Connection[]> {
  const res = await fetch(`${emu.url}/api/v1/ds-connections/file-download/export`, {
    headers: { Authorization: `Bearer ${emu.token}` },
  });
  if (!res.ok) throw new Error(`export failed: ${res.status}`);
  const all = (await res.json()) as Connection[];
  const entries = all
    .filter(options.only ?? (() => true))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  await writeSnapshot(path, entries, options.sourceUrl ?? emu.url);
  return entries;
}

/** `count` generated connections (`seed`), without their ids, in name order, written as a snapshot. */
export async function writeGeneratedSnapshot(
  path: string,
  count: number,
  seed: number,
): Promise<Connection[]> {
  const entries = generateConnections(count, { seed })
    .map(({ _id, ...rest }) => rest as unknown as Connection)
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  await writeSnapshot(path, entries, 'https://prod.example.com');
  return entries;
}

/** Write entries as a snapshot file. */
export async function writeSnapshot(
  path: string,
  entries: readonly Connection[],
  sourceUrl: string,
): Promise<void> {
  const lines = entries.map((e) => serializeEntryLine(e));
  const header = createSnapshotHeader({
    tool: 'dds-migrate test',
    source: { url: sourceUrl, environment: 'test' },
  });
  const text = [
    serializeHeaderLine(header),
    ...lines,
    serializeTrailerLine({
      entryCount: lines.length,
      connectionCount: lines.length,
      scanProfileCount: 0,
      sha256: hashEntryLines(lines),
    }),
  ].join('\n');
  await writeFile(path, `${text}\n`, { mode: 0o600 });
}

/**
 * Overrides supplying every masked top-level secret of `entries` from an environment variable, with the
 * real value taken from `realSecrets` (the source emulator's store). Returns the file content and env.
 */
export function buildSecretOverrides(
  entries: readonly Connection[],
  realValue: (name: string, field: string) => unknown,
): { overrides: { byName: Record<string, Record<string, unknown>> }; env: Record<string, string> } {
  const byName: Record<string, Record<string, unknown>> = {};
  const env: Record<string, string> = {};
  let i = 0;
  for (const entry of entries) {
    for (const [field, value] of Object.entries(entry)) {
      if (field === 'custom_fields' && Array.isArray(value) && value.some((f) => f?.field_value === MASK)) {
        const real = realValue(entry.name, field) as { field_value: unknown }[];
        slot(byName, entry.name).custom_fields = value.map((f, j) => {
          if (f?.field_value !== MASK) return f;
          const variable = `SECRET_${i++}`;
          env[variable] = String(real[j]?.field_value);
          return { ...f, field_value: `\${env:${variable}}` };
        });
        continue;
      }
      if (value !== MASK) continue;
      const variable = `SECRET_${i++}`;
      const real = realValue(entry.name, field);
      if (typeof real !== 'string') throw new Error(`no real value for ${entry.name}.${field}`);
      env[variable] = real;
      slot(byName, entry.name)[field] = `\${env:${variable}}`;
    }
  }
  return { overrides: { byName }, env };
}

/** Number of POSTs to the create endpoint the emulator saw. */
export function countCreatePosts(emu: RunningEmulator): number {
  return emu.record.requests.filter((r) => r.method === 'POST' && r.path === '/api/v1/ds_connections').length;
}

/** The override block of `name`, created when missing. */
function slot(byName: Record<string, Record<string, unknown>>, name: string): Record<string, unknown> {
  let block = byName[name];
  if (block === undefined) {
    block = {};
    byName[name] = block;
  }
  return block;
}

/**
 * The scanners and stored credentials of an import target that holds every scanner group and stored
 * credential the fixtures' connections use (prod's and dr-partial's, `dr-scanners` included): the
 * reference check of the pre-flight finds nothing missing. Spread it into a target's seed:
 * `startEmulator({ data: { connections: [], ...targetReferences() } })`.
 */
export function targetReferences(): Required<Pick<EmulatorSeed, 'scanners' | 'credentials'>> {
  type Seed = Required<Pick<EmulatorSeed, 'scanners' | 'credentials'>>;
  const scanners = new Map<string, Seed['scanners'][number]>();
  const credentials = new Map<string, Seed['credentials'][number]>();
  for (const name of ['prod.json', 'dr-partial.json']) {
    const seed = JSON.parse(readFileSync(join(fixturesDir(), 'environments', name), 'utf8')) as Seed;
    for (const s of seed.scanners) scanners.set(s.name, s);
    for (const c of seed.credentials) credentials.set(c.credential_id, c);
  }
  return { scanners: [...scanners.values()], credentials: [...credentials.values()] };
}
