/**
 * The executor (src/sync/execute.ts) driven directly with connection creates, through `runImport`
 * below (the plan's send steps in, outcomes as the import reports them out): a scripted fake target (or the real HTTP
 * client against nock), a real journal in a temporary folder, a fake clock. The invariants checked
 * throughout: an intent is on disk before each POST; a POST is never sent again for a name without a
 * look-up in between (except after a 429, which is certainly not applied); a stopped run leaves no new
 * request behind it and a journal that the next run can reconcile.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import nock from 'nock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createConnection, getConnectionByName } from '../../src/api/connections.js';
import { createRetryBudget, type RetryBudget } from '../../src/api/retry-policy.js';
import type { ConnectionKey } from '../../src/api/types.js';
import { ApiError, AuthError, ExitCode, InterruptedError, UnavailableError } from '../../src/errors.js';
import { held } from '../../src/importer/source.js';
import { createSilentLogger, type Logger } from '../../src/log.js';
import type { Connection } from '../../src/model/connection.js';
import { type ExecuteOptions, executeSteps, type WriteOutcome } from '../../src/sync/execute.js';
import type { IntentRecord, JournalRecord } from '../../src/sync/journal/records.js';
import { type JournalReplay, replayJournal, writesOf } from '../../src/sync/journal/replay.js';
import { type Journal, openJournal } from '../../src/sync/journal/writer.js';
import type { SendStep } from '../../src/sync/kinds/connection/kind.js';
import { Write } from '../../src/sync/step.js';
import { type Clock, createRateLimiter, type RateLimiter } from '../../src/sync/throttle.js';
import { recordsOf } from '../helpers/journal-records.js';
import { makeTempDir } from '../helpers/temp-dir.js';
import { BASE, makeClient } from '../http/client-fixture.js';

/** The newest run's last write of each connection, by name. */
const connectionWrites = (replay: JournalReplay) => writesOf(replay.runs.at(-1), 'connection');
const CREATE_PATH = '/api/v1/ds_connections';

/** How the test's target is written to: one POST, one look-up by name. */
interface ImportTarget {
  create(body: Readonly<Record<string, unknown>>): Promise<ConnectionKey>;
  lookup(name: string, signal: AbortSignal): Promise<Connection | undefined>;
}

/** A create's outcome as the import reports it. */
type EntryOutcome =
  | {
      readonly kind: 'created';
      readonly step: SendStep;
      readonly targetId: string | undefined;
      readonly via: 'post' | 'lookup';
      readonly attempts: number;
    }
  | {
      readonly kind: 'failed';
      readonly step: SendStep;
      readonly httpStatus: number | undefined;
      readonly message: string;
    }
  | { readonly kind: 'pending'; readonly step: SendStep; readonly inDoubt: boolean };

interface RunImportDeps {
  readonly target: ImportTarget;
  readonly journal: Journal;
  readonly limiter: RateLimiter;
  readonly budget: RetryBudget;
  readonly log: Logger;
  readonly signal: AbortSignal;
  readonly clock?: Clock;
  readonly random?: () => number;
  readonly onOutcome?: (outcome: EntryOutcome) => void;
}

interface RunImportResult {
  readonly outcomes: readonly EntryOutcome[];
  readonly stoppedBy: Awaited<ReturnType<typeof executeSteps>>['stoppedBy'];
}

/** A send step of the plan, as the import hands it to the executor. */
const createWrite = (plan: SendStep) =>
  new Write(plan, {
    object: 'connection',
    op: 'create',
    name: plan.name,
    targetName: plan.targetName,
    inDoubt: plan.kind === 'reconcile',
  });

function asEntryOutcome(outcome: WriteOutcome<SendStep>): EntryOutcome {
  const step = outcome.step.plan;
  if (outcome.kind === 'applied')
    return {
      kind: 'created',
      step,
      targetId: outcome.targetId,
      via: outcome.via === 'lookup' ? 'lookup' : 'post',
      attempts: outcome.attempts,
    };
  if (outcome.kind === 'failed')
    return { kind: 'failed', step, httpStatus: outcome.httpStatus, message: outcome.message };
  if (outcome.kind === 'exists') throw new Error('not asked for in these tests');
  return { kind: 'pending', step, inDoubt: outcome.inDoubt };
}

/** Run connection creates through the executor, with the test's target. */
async function runImport(
  steps: readonly SendStep[],
  deps: RunImportDeps,
  options: Omit<ExecuteOptions<SendStep>, 'load'> = {},
): Promise<RunImportResult> {
  const { target, onOutcome, ...rest } = deps;
  const result = await executeSteps(
    steps.map(createWrite),
    {
      ...rest,
      run: 1,
      writers: {
        connection: {
          create: async (body) => (await target.create(body))._id,
          lookup: async (name, signal) => {
            const found = await target.lookup(name, signal);
            return found === undefined
              ? undefined
              : { id: typeof found._id === 'string' ? found._id : undefined };
          },
          update: () => Promise.reject(new Error('not in these tests')),
          remove: () => Promise.reject(new Error('not in these tests')),
        },
      },
    },
    {
      ...options,
      load: ({ plan }) => plan.source.load(),
      ...(onOutcome ? { onOutcome: (o) => onOutcome(asEntryOutcome(o)) } : {}),
    },
  );
  return { outcomes: result.outcomes.map(asEntryOutcome), stoppedBy: result.stoppedBy };
}

/** A promise with its resolve exposed. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** A clock whose sleeps return at once but advance its time (and are recorded); honours aborts. */
function createFakeClock() {
  let t = 0;
  const sleeps: number[] = [];
  const clock: Clock = {
    now: () => t,
    sleep: async (ms, signal) => {
      if (signal?.aborted) throw signal.reason;
      sleeps.push(ms);
      t += ms;
    },
  };
  return { clock, sleeps };
}

/** What the fake service does with one POST of a name. */
type Reply =
  /** Applied, answered 201 (or 409 "already exists" when the name is taken). */
  | 'ok'
  /** Applied, then answered 502: in doubt. */
  | 'applied-502'
  /** Applied, then the socket was reset: in doubt. */
  | 'applied-reset'
  /** Not applied, answered 502: in doubt. */
  | '502'
  /** Not applied yet: answered 502, and applied right after the next look-up (a POST landing late). */
  | 'late-502'
  | '401'
  | { readonly status: 400; readonly message: string }
  /** Not applied, answered 429 (once `after` resolves, if given: an answer that comes late). */
  | { readonly status: 429; readonly retryAfterMs: number; readonly after?: Promise<void> }
  /** Applied, answered once the test releases it (a POST in flight). */
  | { readonly gate: Promise<void> }
  /** Not an HTTP outcome at all: a bug. */
  | 'type-error';

interface FakeServiceOptions {
  /** Replies per name, consumed one per POST; 'ok' once a list runs out. */
  readonly script?: Record<string, Reply[]>;
  /** Names that already exist in the target. */
  readonly existing?: readonly string[];
  /** The journal file, checked before every POST for the intent of that POST. */
  readonly journalPath: () => string;
  readonly clock?: Clock;
  /** The look-up fails with this error. */
  readonly lookupError?: Error;
}

/** A scripted target: records every request, checks the journal's intent before each POST. */
function createFakeService(options: FakeServiceOptions) {
  const store = new Map<string, string>();
  for (const name of options.existing ?? []) store.set(name, `id-${name}`);
  const requests: { method: 'POST' | 'GET'; name: string; at: number }[] = [];
  const late = new Set<string>();
  const postWaiters: { n: number; resolve: () => void }[] = [];
  let nextId = 1;
  const apply = (name: string): string => {
    const id = `new-${nextId++}`;
    store.set(name, id);
    return id;
  };
  const apiError = (status: number, message: string) =>
    new ApiError({ method: 'POST', path: CREATE_PATH, status, serviceMessage: message });
  const posts = () => requests.filter((r) => r.method === 'POST').map((r) => r.name);

  const target: ImportTarget = {
    async create(body): Promise<ConnectionKey> {
      const name = body.name as string;
      // The intent of this very POST must already be durable.
      const onDisk = recordsOf(readFileSync(options.journalPath(), 'utf8')).filter(
        (r): r is IntentRecord => r.kind === 'intent' && r.targetName === name,
      ).length;
      const sent = posts().filter((n) => n === name).length;
      if (onDisk < sent + 1) throw new Error(`POST of ${name} without its intent on disk`);
      requests.push({ method: 'POST', name, at: options.clock?.now() ?? 0 });
      for (const w of postWaiters)
        if (requests.filter((r) => r.method === 'POST').length === w.n) w.resolve();
      const reply = options.script?.[name]?.shift() ?? 'ok';
      if (typeof reply === 'object' && 'status' in reply && reply.status === 429) {
        // The runner reports it to the throttle (with the POST's send time), as it does in production.
        if (reply.after) await reply.after;
        throw new ApiError(
          { method: 'POST', path: CREATE_PATH, status: 429, serviceMessage: 'Too many requests' },
          { retryAfterMs: reply.retryAfterMs },
        );
      }
      if (typeof reply === 'object' && 'gate' in reply) {
        await reply.gate;
        return { name, _id: apply(name) };
      }
      if (typeof reply === 'object') throw apiError(reply.status, reply.message);
      switch (reply) {
        case 'ok':
          if (store.has(name)) throw apiError(409, `A data source named ${name} already exists`);
          return { name, _id: apply(name) };
        case 'applied-502':
          apply(name);
          throw apiError(502, 'Bad Gateway');
        case 'applied-reset':
          apply(name);
          throw new UnavailableError('Cannot reach test (connection reset)', undefined, {
            networkCode: 'ECONNRESET',
            inDoubt: true,
          });
        case '502':
          throw apiError(502, 'Bad Gateway');
        case 'late-502':
          late.add(name);
          throw apiError(502, 'Bad Gateway');
        case '401':
          throw new AuthError('The service rejected the token of test');
        case 'type-error':
          throw new TypeError('something unexpected');
        default: {
          const unreachable: never = reply;
          throw new Error(`unscripted ${String(unreachable)}`);
        }
      }
    },
    async lookup(name): Promise<Connection | undefined> {
      requests.push({ method: 'GET', name, at: options.clock?.now() ?? 0 });
      if (options.lookupError) throw options.lookupError;
      const id = store.get(name);
      if (late.delete(name)) apply(name);
      return id === undefined ? undefined : ({ name, type: 's3', _id: id } as Connection);
    },
  };
  return {
    target,
    store,
    requests,
    posts,
    lookups: () => requests.filter((r) => r.method === 'GET').map((r) => r.name),
    /** The methods of the requests for one name, in order. */
    sequence: (name: string) => requests.filter((r) => r.name === name).map((r) => r.method),
    /** Resolves when the service has received `n` POSTs in all. */
    whenPosts(n: number): Promise<void> {
      const d = deferred();
      postWaiters.push({ n, resolve: d.resolve });
      if (posts().length >= n) d.resolve();
      return d.promise;
    },
  };
}

function step(name: string, kind: SendStep['kind'] = 'create'): SendStep {
  return {
    kind,
    name,
    type: 's3',
    sourceId: `src-${name}`,
    targetName: name,
    source: held({ body: { name, type: 's3' } }),
  };
}

/** A budget that reports when a take is refused (the moment the run decides to stop). */
function watchBudget(size: number) {
  const inner = createRetryBudget(size);
  const refused = deferred();
  const budget: RetryBudget = {
    take() {
      const ok = inner.take();
      if (!ok) refused.resolve();
      return ok;
    },
    get remaining() {
      return inner.remaining;
    },
  };
  return { budget, refused: refused.promise };
}

let dir: string;
let journal: Journal;
let journalPath: string;

beforeEach(async () => {
  dir = await makeTempDir('import-run-');
  journalPath = join(dir, 'journal.jsonl');
  journal = await openJournal(
    journalPath,
    { snapshotSha256: 'b'.repeat(64), targetUrl: 'http://target.test' },
    { tool: 'dds-migrate test' },
  );
});
afterEach(async () => {
  await journal.close();
  nock.cleanAll();
});

/** The journal's records (after the run flushed them). */
function journalRecords(): JournalRecord[] {
  return recordsOf(readFileSync(journalPath, 'utf8'));
}

/** Every created outcome of the journal follows an intent of the same name; no name has two. */
function expectConsistentJournal(): void {
  const seen = new Set<string>();
  const done = new Set<string>();
  for (const r of journalRecords()) {
    if (r.kind === 'intent') {
      expect(done.has(r.name), `intent for ${r.name} after its outcome`).toBe(false);
      seen.add(r.name);
    }
    if (r.kind === 'outcome') {
      expect(seen.has(r.name), `outcome for ${r.name} without an intent`).toBe(true);
      expect(done.has(r.name), `two outcomes for ${r.name}`).toBe(false);
      done.add(r.name);
    }
  }
}

interface Harness {
  readonly service: ReturnType<typeof createFakeService>;
  readonly clock: ReturnType<typeof createFakeClock>;
  readonly limiter: RateLimiter;
  readonly settled: EntryOutcome[];
  run(
    steps: readonly SendStep[],
    options?: { budget?: RetryBudget; concurrency?: number; signal?: AbortSignal },
  ): Promise<RunImportResult>;
}

/**
 * The dependencies of a run driven without the harness, but its target: the test's journal, a fresh
 * throttle on `clock`, a budget of `budget` retries, a silent log and a signal never aborted.
 */
function baseDeps(clock: Clock, budget: number): Omit<RunImportDeps, 'target'> {
  return {
    journal,
    limiter: createRateLimiter({ clock }),
    budget: createRetryBudget(budget),
    log: createSilentLogger(),
    signal: new AbortController().signal,
    clock,
  };
}

function harness(options: Omit<FakeServiceOptions, 'journalPath' | 'clock'> = {}): Harness {
  const clock = createFakeClock();
  const limiter = createRateLimiter({ clock: clock.clock });
  const service = createFakeService({
    ...options,
    journalPath: () => journalPath,
    clock: clock.clock,
  });
  const settled: EntryOutcome[] = [];
  return {
    service,
    clock,
    limiter,
    settled,
    run: (steps, o = {}) =>
      runImport(
        steps,
        {
          target: service.target,
          journal,
          limiter,
          budget: o.budget ?? createRetryBudget(10),
          log: createSilentLogger(),
          signal: o.signal ?? new AbortController().signal,
          clock: clock.clock,
          random: () => 0.5,
          onOutcome: (outcome) => settled.push(outcome),
        },
        { concurrency: o.concurrency ?? 1 },
      ),
  };
}

describe('runImport: in-doubt outcomes are looked up before anything is sent again', () => {
  it.each([
    ['a 502 after the create was applied', 'applied-502'],
    ['a reset after the create was applied (UnavailableError, in doubt)', 'applied-reset'],
  ] as const)(
    '%s: found by the look-up, recorded created with its _id, exactly one POST',
    async (_, reply) => {
      const h = harness({ script: { a: [reply] } });
      const budget = createRetryBudget(5);
      const result = await h.run([step('a')], { budget });
      expect(result.stoppedBy).toBeUndefined();
      const id = h.service.store.get('a');
      expect(id).toBeDefined();
      expect(result.outcomes).toEqual([
        expect.objectContaining({ kind: 'created', targetId: id, via: 'lookup', attempts: 1 }),
      ]);
      expect(h.service.requests.map((r) => `${r.method} ${r.name}`)).toEqual(['POST a', 'GET a']);
      expect(budget.remaining).toBe(4);
      const records = journalRecords().filter((r) => r.kind !== 'begin');
      expect(records).toEqual([
        expect.objectContaining({ kind: 'intent', name: 'a', attempt: 1 }),
        expect.objectContaining({
          kind: 'outcome',
          result: 'created',
          name: 'a',
          targetId: id,
          via: 'lookup',
        }),
      ]);
    },
  );

  it('absent on look-up: POSTs again (a new intent first) and records the second answer', async () => {
    const h = harness({ script: { a: ['502'] } });
    const result = await h.run([step('a')]);
    expect(result.stoppedBy).toBeUndefined();
    expect(h.service.requests.map((r) => `${r.method} ${r.name}`)).toEqual(['POST a', 'GET a', 'POST a']);
    expect(result.outcomes).toEqual([
      expect.objectContaining({
        kind: 'created',
        targetId: h.service.store.get('a'),
        via: 'post',
        attempts: 2,
      }),
    ]);
    const intents = journalRecords().filter((r) => r.kind === 'intent');
    expect(intents.map((r) => (r as IntentRecord).attempt)).toEqual([1, 2]);
    // The back-off before the look-up is full jitter over the first ceiling (250 ms x 0.5).
    expect(h.clock.sleeps).toContain(125);
    expectConsistentJournal();
  });

  it('a rejection after an in-doubt attempt is looked up: our own late POST is created, not failed', async () => {
    // POST 1: 502, lands only after the look-up; POST 2: 409 "already exists" (it is ours).
    const h = harness({ script: { a: ['late-502', 'ok'] } });
    const result = await h.run([step('a')]);
    expect(result.stoppedBy).toBeUndefined();
    expect(h.service.requests.map((r) => `${r.method} ${r.name}`)).toEqual([
      'POST a',
      'GET a',
      'POST a',
      'GET a',
    ]);
    expect(result.outcomes).toEqual([
      expect.objectContaining({ kind: 'created', targetId: h.service.store.get('a'), via: 'lookup' }),
    ]);
    expect(journalRecords().at(-1)).toMatchObject({ kind: 'outcome', result: 'created', via: 'lookup' });
  });

  it('a rejection after an in-doubt attempt, name absent: failed with the service message', async () => {
    const h = harness({ script: { a: ['502', { status: 400, message: 'port must be a number' }] } });
    const result = await h.run([step('a')]);
    expect(result.stoppedBy).toBeUndefined();
    expect(h.service.lookups()).toEqual(['a', 'a']);
    expect(result.outcomes).toEqual([
      expect.objectContaining({ kind: 'failed', httpStatus: 400, message: 'port must be a number' }),
    ]);
    expect(h.service.store.has('a')).toBe(false);
  });

  it('a definite 400: failed with the service message, no look-up, no retry, budget untouched', async () => {
    const h = harness({ script: { a: [{ status: 400, message: 'unknown field "colour"' }] } });
    const budget = createRetryBudget(3);
    const result = await h.run([step('a'), step('b')], { budget });
    expect(result.stoppedBy).toBeUndefined();
    expect(h.service.requests.map((r) => `${r.method} ${r.name}`)).toEqual(['POST a', 'POST b']);
    expect(result.outcomes[0]).toEqual(
      expect.objectContaining({ kind: 'failed', httpStatus: 400, message: 'unknown field "colour"' }),
    );
    expect(result.outcomes[1]).toEqual(expect.objectContaining({ kind: 'created', via: 'post' }));
    expect(budget.remaining).toBe(3);
    expect(journalRecords()).toContainEqual(
      expect.objectContaining({
        kind: 'outcome',
        result: 'failed',
        name: 'a',
        httpStatus: 400,
        message: 'unknown field "colour"',
      }),
    );
    expect(h.settled.map((o) => o.kind)).toEqual(['failed', 'created']);
  });

  it('a reconcile step (in doubt from an earlier run) is looked up first: found -> no POST; absent -> POST', async () => {
    const h = harness({ existing: ['x'] });
    const result = await h.run([step('x', 'reconcile'), step('y', 'reconcile')]);
    expect(result.stoppedBy).toBeUndefined();
    expect(h.service.requests.map((r) => `${r.method} ${r.name}`)).toEqual(['GET x', 'GET y', 'POST y']);
    expect(result.outcomes).toEqual([
      expect.objectContaining({ kind: 'created', targetId: 'id-x', via: 'lookup', attempts: 0 }),
      expect.objectContaining({ kind: 'created', via: 'post', attempts: 1 }),
    ]);
  });
});

describe('runImport: stopping', () => {
  it('401: the run stops with AuthError (exit 4); the POST in flight settles; nothing new starts', async () => {
    const gateA = deferred();
    const h = harness({ script: { a: [{ gate: gateA.promise }], b: ['401'] } });
    const running = h.run([step('a'), step('b'), step('c'), step('d')], { concurrency: 2 });
    await h.service.whenPosts(2);
    gateA.resolve();
    const result = await running;
    expect(result.stoppedBy).toBeInstanceOf(AuthError);
    expect(result.stoppedBy?.exitCode).toBe(ExitCode.auth);
    expect(h.service.posts()).toEqual(['a', 'b']);
    expect(result.outcomes.map((o) => o.kind)).toEqual(['created', 'pending', 'pending', 'pending']);
    const entries = connectionWrites(replayJournal(readFileSync(journalPath, 'utf8')));
    expect(entries.get('a')).toMatchObject({ state: 'done', targetId: h.service.store.get('a') });
    // b's intent stays open: the next run looks it up before sending (a 401 applied nothing, but the
    // runner does not rely on that).
    expect(entries.get('b')).toMatchObject({ state: 'in-doubt' });
    // c was never sent, and no intent of it was written: the next run sends it without a look-up.
    expect(h.service.sequence('c')).toEqual([]);
    expect(entries.get('c')).toBeUndefined();
    expectConsistentJournal();
  });

  it('retry budget spent: UnavailableError (exit 5); no request after; in flight settles; journal reconcilable', async () => {
    const gateB = deferred();
    const h = harness({ script: { a: ['502', '502', '502', '502'], b: [{ gate: gateB.promise }] } });
    const { budget, refused } = watchBudget(2);
    const running = h.run([step('a'), step('b'), step('c')], { budget, concurrency: 2 });
    await refused;
    const requestsAtStop = h.service.requests.length;
    gateB.resolve();
    const result = await running;
    expect(result.stoppedBy).toBeInstanceOf(UnavailableError);
    expect(result.stoppedBy?.exitCode).toBe(ExitCode.unavailable);
    expect(result.stoppedBy?.message).toMatch(/retry budget/);
    expect(result.stoppedBy?.toUserLine()).toMatch(/re-run/);
    // No request started after the stop (b's POST was already in flight).
    expect(h.service.requests.length).toBe(requestsAtStop);
    // a: three POSTs, a look-up between each two; b: one POST (in flight at the stop); c: nothing.
    expect(h.service.sequence('a')).toEqual(['POST', 'GET', 'POST', 'GET', 'POST']);
    expect(h.service.sequence('b')).toEqual(['POST']);
    expect(h.service.sequence('c')).toEqual([]);
    expect(result.outcomes).toEqual([
      expect.objectContaining({ kind: 'pending', inDoubt: true }),
      expect.objectContaining({ kind: 'created', via: 'post' }),
      expect.objectContaining({ kind: 'pending', inDoubt: false }),
    ]);
    const entries = connectionWrites(replayJournal(readFileSync(journalPath, 'utf8')));
    expect(entries.get('a')).toMatchObject({ state: 'in-doubt', targetName: 'a' });
    expect(entries.get('b')).toMatchObject({ state: 'done' });
    // c was never sent (above), and no intent of it was written.
    expect(entries.get('c')).toBeUndefined();
    expectConsistentJournal();
  });

  it('a stop ends the backoff waits of other entries at once (no look-up or POST after it)', async () => {
    // a is in doubt and sleeps in its backoff; b's 401 stops the run meanwhile. The test's timer would
    // end a's sleep one macrotask after the 401: a prompt stop has ended it before.
    const sleeping = deferred();
    const timer = deferred();
    const sleepEnds: string[] = [];
    const clock: Clock = {
      now: () => 0,
      sleep: (_ms, signal) =>
        new Promise<void>((resolve, reject) => {
          if (signal?.aborted) return reject(signal.reason);
          const onAbort = () => {
            sleepEnds.push('aborted');
            reject(signal?.reason);
          };
          signal?.addEventListener('abort', onAbort, { once: true });
          sleeping.resolve();
          void timer.promise.then(() => {
            if (signal?.aborted) return;
            signal?.removeEventListener('abort', onAbort);
            sleepEnds.push('slept');
            resolve();
          });
        }),
    };
    const service = createFakeService({ script: { a: ['502'], b: ['401'] }, journalPath: () => journalPath });
    const result = await runImport(
      [step('a'), step('b')],
      {
        target: {
          create: async (body) => {
            if (body.name !== 'b') return service.target.create(body);
            // b is sent only once a sleeps in its backoff.
            await sleeping.promise;
            try {
              return await service.target.create(body);
            } finally {
              setImmediate(() => timer.resolve());
            }
          },
          lookup: service.target.lookup,
        },
        ...baseDeps(clock, 5),
      },
      { concurrency: 2 },
    );
    expect(result.stoppedBy).toBeInstanceOf(AuthError);
    expect(sleepEnds).toEqual(['aborted']);
    expect(service.requests.map((r) => `${r.method} ${r.name}`)).toEqual(['POST a', 'POST b']);
    expect(result.outcomes.map((o) => o.kind)).toEqual(['pending', 'pending']);
  });

  it('a stop that comes while an intent is being written still prevents its POST (the intent is withdrawn)', async () => {
    const fsync = deferred();
    const service = createFakeService({ script: { a: ['401'] }, journalPath: () => journalPath });
    const slowJournal: Journal = {
      ...journal,
      append: async (record) => {
        if (record.kind === 'intent' && record.name === 'b') await fsync.promise;
        return journal.append(record);
      },
    };
    const { clock } = createFakeClock();
    const running = runImport(
      [step('a'), step('b')],
      {
        target: {
          create: async (body) => {
            try {
              return await service.target.create(body);
            } finally {
              // b's fsync ends once a's 401 has been handled.
              setImmediate(() => fsync.resolve());
            }
          },
          lookup: service.target.lookup,
        },
        ...baseDeps(clock, 5),
        journal: slowJournal,
      },
      { concurrency: 2 },
    );
    const result = await running;
    expect(result.stoppedBy).toBeInstanceOf(AuthError);
    expect(service.posts()).toEqual(['a']);
    // Never sent: withdrawn, so the next run sends it without a look-up.
    const text = readFileSync(journalPath, 'utf8');
    expect(connectionWrites(replayJournal(text)).get('b')).toBeUndefined();
    expect(text).toMatch(/"kind":"withdrawn".*"name":"b"/);
  });

  it('a look-up that fails stops the run (exit 5) with the name in the message', async () => {
    const h = harness({
      script: { a: ['502'] },
      lookupError: new UnavailableError('Cannot reach test after 6 attempts (connection reset)'),
    });
    const result = await h.run([step('a'), step('b')]);
    expect(result.stoppedBy).toBeInstanceOf(UnavailableError);
    expect(result.stoppedBy?.message).toMatch(/'a'/);
    expect(h.service.posts()).toEqual(['a']);
    expect(result.outcomes.map((o) => o.kind)).toEqual(['pending', 'pending']);
  });

  it('Ctrl-C: stops starting requests, POSTs in flight settle and are journaled, InterruptedError (130)', async () => {
    const gateA = deferred();
    const gateB = deferred();
    const h = harness({ script: { a: [{ gate: gateA.promise }], b: [{ gate: gateB.promise }] } });
    const controller = new AbortController();
    const running = h.run([step('a'), step('b'), step('c'), step('d')], {
      concurrency: 2,
      signal: controller.signal,
    });
    await h.service.whenPosts(2);
    controller.abort();
    gateA.resolve();
    gateB.resolve();
    const result = await running;
    expect(result.stoppedBy).toBeInstanceOf(InterruptedError);
    expect(result.stoppedBy?.exitCode).toBe(ExitCode.interrupted);
    expect(h.service.posts()).toEqual(['a', 'b']);
    expect(result.outcomes.map((o) => o.kind)).toEqual(['created', 'created', 'pending', 'pending']);
    const entries = connectionWrites(replayJournal(readFileSync(journalPath, 'utf8')));
    expect(entries.get('a')).toMatchObject({ state: 'done' });
    expect(entries.get('b')).toMatchObject({ state: 'done' });
    // Only settled entries reach the progress callback.
    expect(h.settled.map((o) => o.step.name).sort()).toEqual(['a', 'b']);
  });

  it('the client refusing to send (InterruptedError) leaves the entry pending and the run interrupted, never exit 0', async () => {
    const service = createFakeService({ journalPath: () => journalPath });
    const { clock } = createFakeClock();
    const result = await runImport(
      [step('a'), step('b')],
      {
        target: {
          create: async () => {
            throw new InterruptedError();
          },
          lookup: service.target.lookup,
        },
        ...baseDeps(clock, 5),
      },
      { concurrency: 1 },
    );
    expect(result.stoppedBy).toBeInstanceOf(InterruptedError);
    expect(result.outcomes.map((o) => o.kind)).toEqual(['pending', 'pending']);
    // a's intent stays open: it is looked up by name next time; b got no intent. Neither was sent.
    const entries = connectionWrites(replayJournal(readFileSync(journalPath, 'utf8')));
    expect(entries.get('a')).toMatchObject({ state: 'in-doubt' });
    expect(entries.get('b')).toBeUndefined();
    expect(service.posts()).toEqual([]);
  });

  it('an unexpected error stops the run like any stop, lets the POST in flight settle, then is rethrown', async () => {
    const gateA = deferred();
    const h = harness({ script: { a: [{ gate: gateA.promise }], b: ['type-error'] } });
    const running = h.run([step('a'), step('b'), step('c')], { concurrency: 2 });
    await h.service.whenPosts(2);
    // b's error must not end the run while a's POST is still in flight.
    let ended = false;
    const outcome = running.then(
      () => 'resolved',
      (error: unknown) => error,
    );
    void outcome.then(() => {
      ended = true;
    });
    await new Promise((r) => setImmediate(r));
    expect(ended).toBe(false);
    gateA.resolve();
    expect(await outcome).toBeInstanceOf(TypeError);
    expect(h.service.posts()).toEqual(['a', 'b']);
    expect(connectionWrites(replayJournal(readFileSync(journalPath, 'utf8'))).get('a')).toMatchObject({
      state: 'done',
    });
  });
});

describe('runImport: intents written ahead', () => {
  it("the next entry's intent is on disk while the request before it is out (concurrency 1)", async () => {
    const gateA = deferred();
    const h = harness({ script: { a: [{ gate: gateA.promise }] } });
    const running = h.run([step('a'), step('b')]);
    await h.service.whenPosts(1);
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    const intents = () =>
      journalRecords()
        .filter((r) => r.kind === 'intent')
        .map((r) => r.name);
    expect(intents()).toEqual(['a', 'b']);
    expect(h.service.posts()).toEqual(['a']);
    gateA.resolve();
    const result = await running;
    expect(result.outcomes.map((o) => o.kind)).toEqual(['created', 'created']);
    // One intent each: b's, written ahead, is the one its POST followed.
    expect(intents()).toEqual(['a', 'b']);
    expectConsistentJournal();
  });

  it('Ctrl-C while a request is out: the intent written ahead is withdrawn, and the journal holds it as never begun', async () => {
    const gateA = deferred();
    const h = harness({ script: { a: [{ gate: gateA.promise }] } });
    const controller = new AbortController();
    const running = h.run([step('a'), step('b'), step('c')], { signal: controller.signal });
    await h.service.whenPosts(1);
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    controller.abort();
    gateA.resolve();
    const result = await running;
    expect(result.stoppedBy).toBeInstanceOf(InterruptedError);
    // b was not sent: pending, not in doubt.
    expect(result.outcomes).toMatchObject([
      { kind: 'created' },
      { kind: 'pending', inDoubt: false },
      { kind: 'pending', inDoubt: false },
    ]);
    const kinds = journalRecords()
      .filter((r) => r.kind !== 'begin')
      .map((r) => `${r.kind} ${'name' in r ? r.name : ''}`);
    expect(kinds).toEqual(['intent a', 'intent b', 'outcome a', 'withdrawn b']);
    const writes = connectionWrites(replayJournal(readFileSync(journalPath, 'utf8')));
    expect(writes.get('a')).toMatchObject({ state: 'done' });
    expect(writes.has('b')).toBe(false);
    expect(h.service.lookups()).toEqual([]);
  });
});

describe('runImport: outcome records do not hold a slot', () => {
  it("the next POST leaves while the previous entry's outcome is still being written (concurrency 1)", async () => {
    const release = deferred();
    const service = createFakeService({ journalPath: () => journalPath });
    const held: string[] = [];
    const slowOutcomes: Journal = {
      ...journal,
      append: async (record) => {
        if (record.kind === 'outcome') {
          held.push(record.name);
          await release.promise;
        }
        return journal.append(record);
      },
    };
    const { clock } = createFakeClock();
    const settled: string[] = [];
    const running = runImport(
      [step('a'), step('b')],
      {
        target: {
          create: async (body) => {
            // b is POSTed while a's outcome write is held: release it then.
            if (body.name === 'b') setImmediate(() => release.resolve());
            return service.target.create(body);
          },
          lookup: service.target.lookup,
        },
        ...baseDeps(clock, 5),
        journal: slowOutcomes,
        onOutcome: (o) => settled.push(o.step.name),
      },
      { concurrency: 1 },
    );
    const result = await running;
    expect(service.posts()).toEqual(['a', 'b']);
    expect(held).toEqual(['a', 'b']);
    expect(result.outcomes.map((o) => o.kind)).toEqual(['created', 'created']);
    // Reported once on disk, and the run resolves only after every outcome is written.
    expect(settled.sort()).toEqual(['a', 'b']);
    expectConsistentJournal();
    expect(connectionWrites(replayJournal(readFileSync(journalPath, 'utf8'))).get('b')).toMatchObject({
      state: 'done',
    });
  });

  it('an outcome that cannot be written stops the run and rethrows the error; nothing new is sent', async () => {
    const service = createFakeService({ journalPath: () => journalPath });
    const failing: Journal = {
      ...journal,
      append: async (record) => {
        if (record.kind === 'outcome') throw new Error('disk full');
        return journal.append(record);
      },
    };
    const { clock } = createFakeClock();
    await expect(
      runImport(
        [step('a'), step('b'), step('c')],
        { target: service.target, ...baseDeps(clock, 5), journal: failing },
        { concurrency: 1 },
      ),
    ).rejects.toThrow('disk full');
    // a's outcome failed after its POST; at most the entry already past its intent was sent.
    expect(service.posts().length).toBeLessThan(3);
    expect(connectionWrites(replayJournal(readFileSync(journalPath, 'utf8'))).get('a')).toMatchObject({
      state: 'in-doubt',
    });
  });
});

describe('runImport: an entry in doubt', () => {
  it('an entry in doubt from an earlier run is looked up before its intent and POST', async () => {
    const gateA = deferred();
    const h = harness({ script: { a: [{ gate: gateA.promise }] } });
    const running = h.run([step('a'), step('b', 'reconcile')], { concurrency: 1 });
    await h.service.whenPosts(1);
    gateA.resolve();
    const result = await running;
    expect(result.outcomes.map((o) => o.kind)).toEqual(['created', 'created']);
    // b: looked up (absent), then its intent, then its POST.
    expect(h.service.sequence('b')).toEqual(['GET', 'POST']);
    expectConsistentJournal();
  });
});

describe('runImport: 429', () => {
  it('waits for Retry-After, resends without a look-up, and takes nothing from the budget', async () => {
    const h = harness({
      script: {
        a: [
          { status: 429, retryAfterMs: 3000 },
          { status: 429, retryAfterMs: 2000 },
        ],
      },
    });
    const budget = createRetryBudget(0);
    const result = await h.run([step('a')], { budget });
    expect(result.stoppedBy).toBeUndefined();
    expect(result.outcomes).toEqual([expect.objectContaining({ kind: 'created', via: 'post', attempts: 3 })]);
    const posts = h.service.requests.filter((r) => r.method === 'POST');
    expect(posts.map((r) => r.name)).toEqual(['a', 'a', 'a']);
    expect(h.service.lookups()).toEqual([]);
    // Each resend waited at least what the service asked for.
    expect((posts[1]?.at ?? 0) - (posts[0]?.at ?? 0)).toBeGreaterThanOrEqual(3000);
    expect((posts[2]?.at ?? 0) - (posts[1]?.at ?? 0)).toBeGreaterThanOrEqual(2000);
    expect(h.limiter.rateLimitedCount).toBe(2);
  });

  it('a 429 answered late to a POST sent before the last decrease does not slow the throttle again (epoch rule, by send time)', async () => {
    // a is sent at t=0 and answered 429 late; b, sent at t=100, is answered 429 at once: the throttle
    // slows down (one decrease). a's late 429 (at t~800, long after that decrease's epoch) reflects the
    // old rate: with its send time the throttle ignores it; without, it would slow down a second time.
    const release = deferred();
    const { clock } = createFakeClock();
    const inner = createRateLimiter({ rate: 10, clock });
    const changes: { sentAt: number | undefined; before: number | undefined; after: number | undefined }[] =
      [];
    const limiter: RateLimiter = {
      reserve: () => inner.reserve(),
      acquire: (signal) => inner.acquire(signal),
      onRateLimited(ms, sentAt) {
        const before = inner.currentRate();
        inner.onRateLimited(ms, sentAt);
        changes.push({ sentAt, before, after: inner.currentRate() });
        // The POST of b that follows its 429 is the cue for the late answer to a.
        if (changes.length === 1) setImmediate(release.resolve);
      },
      currentRate: () => inner.currentRate(),
      get rateLimitedCount() {
        return inner.rateLimitedCount;
      },
    };
    const service = createFakeService({
      script: {
        a: [{ status: 429, retryAfterMs: 0, after: release.promise }],
        b: [{ status: 429, retryAfterMs: 0 }],
      },
      journalPath: () => journalPath,
      clock,
    });
    const result = await runImport([step('a'), step('b')], {
      ...baseDeps(clock, 0),
      target: service.target,
      limiter,
    });
    expect(result.stoppedBy).toBeUndefined();
    expect(result.outcomes.map((o) => o.kind)).toEqual(['created', 'created']);
    expect(changes).toHaveLength(2);
    // b's 429: sent at t=100, lowers the rate.
    expect(changes[0]?.sentAt).toBe(100);
    expect(changes[0]?.after).toBeLessThan(changes[0]?.before ?? 0);
    // a's late 429: sent at t=0, before that decrease: the rate stays where it was.
    expect(changes[1]?.sentAt).toBe(0);
    expect(changes[1]?.after).toBe(changes[1]?.before);
  });

  it('gives up on the service (exit 5) after too many 429s for one entry', async () => {
    const h = harness({
      script: { a: Array.from({ length: 10 }, () => ({ status: 429, retryAfterMs: 10 }) as const) },
    });
    const result = await runImport(
      [step('a')],
      {
        target: h.service.target,
        ...baseDeps(h.clock.clock, 0),
        limiter: h.limiter,
      },
      { maxRateLimitedPerStep: 3 },
    );
    expect(result.stoppedBy).toBeInstanceOf(UnavailableError);
    expect(result.stoppedBy?.message).toMatch(/429/);
    expect(h.service.posts()).toHaveLength(4);
  });
});

describe('runImport through the real HTTP client (nock)', () => {
  function realTarget(onRateLimited?: (ms: number | undefined) => void) {
    const { client } = makeClient({}, onRateLimited ? { onRateLimited } : {});
    const target: ImportTarget = {
      create: (body) => createConnection(client, body as Record<string, unknown>),
      lookup: (name, signal) => getConnectionByName(client, name, { signal }),
    };
    return target;
  }

  it('an HTML 502 page is in doubt: looked up, found, recorded with its _id after one POST', async () => {
    const scope = nock(BASE)
      .post(CREATE_PATH)
      .once()
      .reply(502, '<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>', {
        'Content-Type': 'text/html',
      })
      .get(`${CREATE_PATH}/a`)
      .reply(200, {
        status: 'success',
        statusCode: 200,
        data: { ds_connection: { _id: 'abc123', name: 'a' } },
      });
    const { clock } = createFakeClock();
    const result = await runImport([step('a')], {
      target: realTarget(),
      ...baseDeps(clock, 3),
    });
    expect(scope.isDone()).toBe(true);
    expect(result.outcomes).toEqual([
      expect.objectContaining({ kind: 'created', targetId: 'abc123', via: 'lookup' }),
    ]);
  });

  it('a name that cannot be looked up (".") is recorded as failed with a clear message; nothing is sent', async () => {
    // No interceptor: a POST or a look-up would fail with a nock network error (in doubt, not failed).
    const { clock } = createFakeClock();
    const result = await runImport([step('.')], { target: realTarget(), ...baseDeps(clock, 3) });
    expect(result.stoppedBy).toBeUndefined();
    expect(result.outcomes).toEqual([
      expect.objectContaining({
        kind: 'failed',
        httpStatus: undefined,
        message: expect.stringMatching(/cannot be used/),
      }),
    ]);
  });

  it("429 with Retry-After: the runner pauses the run's throttle (the client's hook stays silent for a POST), the POST is resent once", async () => {
    const { clock, sleeps } = createFakeClock();
    const limiter = createRateLimiter({ clock });
    let posts = 0;
    nock(BASE)
      .post(CREATE_PATH)
      .times(2)
      .reply(() => {
        posts += 1;
        return posts === 1
          ? [429, { error: 'Too many requests' }, { 'Retry-After': '2' }]
          : [201, { status: 'success', data: { _id: 'id-a', name: 'a' } }];
      });
    const hook: (number | undefined)[] = [];
    const result = await runImport([step('a')], {
      target: realTarget((ms) => hook.push(ms)),
      ...baseDeps(clock, 0),
      limiter,
    });
    expect(result.stoppedBy).toBeUndefined();
    expect(hook).toEqual([]);
    expect(limiter.rateLimitedCount).toBe(1);
    expect(posts).toBe(2);
    expect(result.outcomes).toEqual([
      expect.objectContaining({ kind: 'created', targetId: 'id-a', via: 'post' }),
    ]);
    expect(sleeps.some((ms) => ms >= 2000)).toBe(true);
  });
});
