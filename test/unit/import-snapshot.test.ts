/**
 * The import workflow with fake ports: no CLI, no emulator, no sockets. It checks what the workflow
 * owns: the order of its side effects (journal before the listing, a dry run that does not create the
 * journal), its events, and that the 429 hook it hands the client factory reaches its own throttle.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ClientOptions } from '../../src/api/client-factory.js';
import type { HttpClient, HttpRequest } from '../../src/api/http.js';
import type { ResolvedEnvironment } from '../../src/config.js';
import { ApiError } from '../../src/errors.js';
import { importSnapshot } from '../../src/importer/import-snapshot.js';
import type { ImportEvent, ImportOptions, ImportPorts } from '../../src/importer/import-types.js';
import { createSilentLogger } from '../../src/log.js';
import type { Connection } from '../../src/model/connection.js';
import type { Clock } from '../../src/sync/throttle.js';
import { writeSnapshot } from '../e2e/import.helpers.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { makeEnvironment } from '../http/client-fixture.js';

const ENTRIES: Connection[] = [
  { _id: 'src-1', name: 'alpha', type: 'custom-type', enabled: 'yes' },
  { _id: 'src-2', name: 'beta', type: 'custom-type', enabled: 'yes' },
];

/** A clock whose sleeps end at once (time moves only when asked). */
function createInstantClock(): Clock {
  let now = 0;
  return {
    now: () => now,
    sleep: async (ms) => {
      now += ms;
    },
  };
}

interface FakeTarget {
  readonly ports: ImportPorts;
  /** `METHOD path` of every request, in order. */
  readonly requests: string[];
  /** Whether the journal file existed when the target was listed. */
  journalExistedAtListing: boolean | undefined;
}

function createFakeTarget(
  journalPath: string,
  options: { rateLimitFirstCreate?: boolean; listingDelayMs?: number } = {},
): FakeTarget {
  const environment: ResolvedEnvironment = makeEnvironment({
    name: 'dr',
    label: 'dr',
    url: 'https://dr.test',
  });
  const fake: FakeTarget = {
    requests: [],
    journalExistedAtListing: undefined,
    ports: {
      resolveTarget: async () => environment,
      createClient: (env: ResolvedEnvironment, clientOptions?: ClientOptions): HttpClient => {
        let created = 0;
        return {
          environment: env,
          async request<T>(req: HttpRequest): Promise<T> {
            fake.requests.push(`${req.method} ${req.path}`);
            if (req.method === 'GET' && req.path === '/ds-connections') {
              // The journal's lock is held (its file may not be written yet: it is replayed meanwhile).
              fake.journalExistedAtListing = existsSync(`${journalPath}.lock`);
              if (options.listingDelayMs !== undefined)
                await new Promise((resolve) => setTimeout(resolve, options.listingDelayMs));
              return { data: { ds_connections: [], totalCount: 0 } } as T;
            }
            if (req.method === 'GET' && (req.path === '/scanner-status' || req.path === '/credentials')) {
              // A target that cannot be asked: the references are warned about, never a refusal.
              throw new ApiError({ method: req.method, path: req.path, status: 404 });
            }
            if (req.method === 'POST') {
              created += 1;
              // The client calls its onRateLimited on a 429; here it is called as if one had come.
              if (options.rateLimitFirstCreate && created === 1) clientOptions?.onRateLimited?.(5);
              const body = req.body as { ds_connection: Connection };
              return { data: { _id: `dst-${created}`, name: body.ds_connection.name } } as T;
            }
            throw new Error(`unexpected request ${req.method} ${req.path}`);
          },
          requestStream: () => Promise.reject(new Error('not used')),
          close: () => undefined,
        };
      },
      env: {},
      log: createSilentLogger(),
      signal: new AbortController().signal,
      clock: createInstantClock(),
    },
  };
  return fake;
}

async function setUp(): Promise<{ dir: string; options: ImportOptions }> {
  const dir = await makeTempDir('dds-import-workflow-');
  const snapshot = join(dir, 'prod.snapshot.jsonl');
  await writeSnapshot(snapshot, ENTRIES, 'https://prod.test');
  return {
    dir,
    options: {
      snapshot,
      concurrency: 1,
      rate: undefined,
      onConflict: 'skip',
      overrides: undefined,
      only: undefined,
      maxChanges: undefined,
      dryRun: false,
      journal: join(dir, 'run.journal.jsonl'),
      idMap: undefined,
      report: join(dir, 'report.jsonl'),
      confirm: undefined,
      allowSameSource: false,
      schemas: undefined,
      templatesFromTarget: false,
    },
  };
}

describe('importSnapshot', () => {
  it('locks the journal before listing the target, reports typed events in order, returns the counts', async () => {
    const { options } = await setUp();
    const fake = createFakeTarget(options.journal as string);
    const events: ImportEvent[] = [];
    const result = await importSnapshot(options, fake.ports, (e) => events.push(e));

    expect(fake.journalExistedAtListing).toBe(true);
    expect(fake.requests).toEqual([
      'GET /ds-connections',
      'GET /scanner-status',
      'GET /credentials',
      'POST /ds_connections',
      'POST /ds_connections',
    ]);
    expect(events.map((e) => e.kind)).toEqual([
      'template-warnings',
      'reference-warnings',
      'run-started',
      'write-settled',
      'write-settled',
      'run-ended',
      'file-written',
    ]);
    expect(events.find((e) => e.kind === 'run-started')).toMatchObject({ target: 'dr', sends: 2, total: 2 });
    expect(result.kind).toBe('ran');
    if (result.kind !== 'ran') return;
    expect(result.counts.created).toBe(2);
    expect(result.stoppedBy).toBeUndefined();
    expect(existsSync(options.report as string)).toBe(true);
  });

  it('a dry run reads the target but does not create the journal, and sends nothing', async () => {
    const { options } = await setUp();
    const fake = createFakeTarget(options.journal as string);
    const result = await importSnapshot({ ...options, dryRun: true }, fake.ports, () => undefined);

    expect(fake.requests).toEqual(['GET /ds-connections', 'GET /scanner-status', 'GET /credentials']);
    expect(existsSync(options.journal as string)).toBe(false);
    expect(result.kind).toBe('dry-run');
    if (result.kind !== 'dry-run') return;
    expect(result.plan.counts.create).toBe(2);
    expect(result.problems).toEqual([]);
  });

  it('finds the same problems and warnings whether entries are checked while the target is listed or after', async () => {
    const { dir, options } = await setUp();
    const entries: Connection[] = Array.from({ length: 300 }, (_, i) => ({
      name: `c${String(i).padStart(3, '0')}`,
      type: i % 3 === 0 ? 'custom-type' : 's3',
      bucket_name: 'b',
      ...(i % 40 === 7 ? { password: '******' } : {}),
      ...(i % 90 === 11 ? { scanner_group: 'nowhere' } : {}),
    }));
    const snapshot = join(dir, 'many.snapshot.jsonl');
    await writeSnapshot(snapshot, entries, 'https://prod.test');
    const runWith = async (listingDelayMs: number | undefined) => {
      const fake = createFakeTarget(join(dir, `j-${String(listingDelayMs)}.jsonl`), { listingDelayMs });
      const events: ImportEvent[] = [];
      const result = await importSnapshot({ ...options, snapshot, dryRun: true }, fake.ports, (e) =>
        events.push(e),
      );
      return { result, events };
    };
    // Answered at once: the first few entries are checked before it arrives, the plan checks the rest.
    const soon = await runWith(undefined);
    // Answered late: every entry is checked while it is out.
    const late = await runWith(300);
    // As data (a send step's body source holds the run's own preparing function).
    expect(JSON.parse(JSON.stringify(late))).toEqual(JSON.parse(JSON.stringify(soon)));
    expect(soon.result.kind === 'dry-run' && soon.result.problems.map((p) => p.entry)).toEqual(
      entries.filter((_, i) => i % 40 === 7).map((e) => e.name),
    );
    expect(soon.events.find((e) => e.kind === 'template-warnings')).toBeDefined();
  });

  it("the 429 hook handed to the client factory reaches the run's throttle", async () => {
    const { options } = await setUp();
    const fake = createFakeTarget(options.journal as string, { rateLimitFirstCreate: true });
    const result = await importSnapshot(options, fake.ports, () => undefined);

    expect(result.kind === 'ran' && result.rateLimited).toBe(1);
  });
});
