/**
 * `diffSources` of a snapshot against an environment (src/diff-workflow/diff-sources.ts): the snapshot
 * is read and checked first, then each exported connection is compared with its twin read again from
 * the file. Against an emulator on loopback (real HTTP): the same result as diffConnections of the
 * two sides as read, whichever side the snapshot is; the lines compared are the lines checked; a name
 * held twice by the environment is refused; a damaged snapshot fails before the environment is asked.
 */
import { join } from 'node:path';
import nock from 'nock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { exportConnections } from '../../src/api/connections.js';
import { createHttpClient } from '../../src/api/http.js';
import type { ResolvedEnvironment } from '../../src/config.js';
import { type DiffOptions, diffSources } from '../../src/diff-workflow/diff-sources.js';
import { startEmulator } from '../../src/emulator/index.js';
import type { RunningEmulator, SeedConnection } from '../../src/emulator/types.js';
import { InputFileError, UsageError } from '../../src/errors.js';
import { createSilentLogger } from '../../src/log.js';
import type { Connection } from '../../src/model/connection.js';
import { loadShippedCatalog } from '../../src/schema/catalog.js';
import { diffConnections } from '../helpers/diff-arrays.js';
import { writeSnapshotFile } from '../helpers/snapshot-file.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const TOKEN = 'side-token';
const IGNORE = ['/owners_v2/*/origin'];
/** A service answered by nock. */
const ELSEWHERE = 'https://dds.test';

let dir: string;
let emulator: RunningEmulator | undefined;
beforeEach(async () => {
  dir = await makeTempDir('dds-migrate-diff-side-');
});
afterEach(async () => {
  await emulator?.close();
  emulator = undefined;
  nock.cleanAll();
});

/** The snapshot's connections and the environment's (in another order, some changed, some missing). */
function sides(n: number): { snapshot: Connection[]; environment: SeedConnection[] } {
  const snapshot: Connection[] = [];
  const environment: SeedConnection[] = [];
  for (let i = 0; i < n; i++) {
    const name = `c${String(i).padStart(4, '0')}`;
    const type = i % 2 ? 'rdb-mysql' : 's3';
    const base = { name, type, password: `pw-${i}`, owners_v2: [{ id: 'x@example.com', origin: 'o' }] };
    snapshot.push({ ...base, description: 'd' } as Connection);
    if (i % 7 !== 0)
      environment.push({
        ...base,
        description: i % 3 ? 'd' : 'changed',
        owners_v2: [{ id: 'x@example.com', origin: 'other' }],
      });
  }
  environment.push({ name: 'only-env', type: 's3', bucket_name: 'b' });
  return { snapshot, environment: environment.reverse() };
}

function environmentOf(url: string): ResolvedEnvironment {
  return {
    name: undefined,
    label: 'env',
    url,
    token: TOKEN,
    refreshToken: undefined,
    authScheme: 'bearer',
    concurrency: undefined,
    rate: undefined,
    protected: false,
    caFile: undefined,
    insecureHttp: false,
  };
}

const createClient = (environment: ResolvedEnvironment) =>
  createHttpClient(environment, { log: createSilentLogger() });

/** Run the diff of `from` against `to` (a snapshot path or the emulator's URL). */
function runDiff(from: string, to: string, onResolve: () => Promise<void> | void = () => undefined) {
  const options: DiffOptions = {
    from,
    to,
    config: { environments: {}, path: undefined },
    cwd: dir,
    ignoreFields: IGNORE,
    schemas: undefined,
  };
  return diffSources(options, {
    resolveEnvironment: async () => {
      await onResolve();
      return environmentOf(emulator?.url ?? ELSEWHERE);
    },
    createClient,
    signal: new AbortController().signal,
  });
}

/** What the environment's export gives (the secrets as the emulator shows them). */
async function exported(): Promise<Connection[]> {
  const client = createClient(environmentOf(emulator?.url as string));
  try {
    const all: Connection[] = [];
    for await (const entry of exportConnections(client)) all.push(entry);
    return all;
  } finally {
    client.close();
  }
}

describe('diffSources, a snapshot against an environment', () => {
  it('equals diffConnections of the two sides as read, whichever side the snapshot is', async () => {
    const { snapshot, environment } = sides(300);
    emulator = await startEmulator({ data: { connections: environment }, token: TOKEN });
    const path = await writeSnapshotFile(join(dir, 'side.snapshot.jsonl'), snapshot);
    const live = await exported();
    const catalog = await loadShippedCatalog(undefined);
    for (const flag of ['from', 'to'] as const) {
      const found = flag === 'from' ? await runDiff(path, emulator.url) : await runDiff(emulator.url, path);
      const compare = { ignoreFields: IGNORE, secretFields: (type: string) => catalog.secretFields(type) };
      const expected =
        flag === 'from' ? diffConnections(snapshot, live, compare) : diffConnections(live, snapshot, compare);
      expect(found.diff).toEqual(expected);
      expect(found.diff.changed.length).toBeGreaterThan(0);
      expect(found.diff.uncomparable.length).toBeGreaterThan(0);
      expect(found.diff.added.length + found.diff.removed.length).toBeGreaterThan(0);
      expect(found[flag].count).toBe(snapshot.length);
      expect(found[flag === 'from' ? 'to' : 'from'].count).toBe(environment.length);
      const added = found.diff.added[0] as string;
      expect(found.typeOf(added)).toBe(
        (flag === 'from' ? snapshot : live).find((c) => c.name === added)?.type,
      );
    }
  });

  it('compares with the lines it checked, whatever the file becomes once checked', async () => {
    const { snapshot, environment } = sides(40);
    emulator = await startEmulator({ data: { connections: environment }, token: TOKEN });
    const path = await writeSnapshotFile(join(dir, 'side.snapshot.jsonl'), snapshot);
    const before = await runDiff(emulator.url, path);
    // Rewritten in place once checked, before the environment is asked: the bytes held are the ones checked.
    let rewritten = false;
    const after = await runDiff(emulator.url, path, async () => {
      rewritten = true;
      await writeSnapshotFile(
        path,
        snapshot.map((c) => ({ ...c, description: 'rewritten' })),
      );
    });
    expect(rewritten).toBe(true);
    expect(after.diff).toEqual(before.diff);
  });

  it('refuses an environment holding a name twice (UsageError, as the whole-sides diff)', async () => {
    const { snapshot } = sides(10);
    // The emulator holds one connection per name: a service that does not, answered by nock.
    nock(ELSEWHERE)
      .get('/api/v1/ds-connections/file-download/export')
      .query(true)
      .reply(200, [
        { name: 'c0001', type: 's3', bucket_name: 'a' },
        { name: 'c0001', type: 's3', bucket_name: 'again' },
      ]);
    nock(ELSEWHERE)
      .get(/scanProfiles/)
      .query(true)
      .reply(404, {});
    const path = await writeSnapshotFile(join(dir, 'side.snapshot.jsonl'), snapshot);
    const error = await runDiff(ELSEWHERE, path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toMatch(/--from side holds more than one connection named "c0001"/);
  });

  it('a damaged snapshot fails before the environment is asked, naming the file and line', async () => {
    const { snapshot } = sides(20);
    const path = await writeSnapshotFile(join(dir, 'side.snapshot.jsonl'), snapshot, {
      damage: (lines) => {
        lines[3] = (lines[3] as string).replace('"', "'");
      },
    });
    let asked = false;
    const error = await runDiff('http://127.0.0.1:9', path, () => {
      asked = true;
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InputFileError);
    expect((error as InputFileError).line).toBe(4);
    expect((error as InputFileError).hint).toBe('The snapshot is damaged: export it again');
    expect(asked).toBe(false);
  });
});
