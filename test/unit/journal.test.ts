import { spawnSync } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { InputFileError, UsageError } from '../../src/errors.js';
import type { JournalRecord } from '../../src/sync/journal/records.js';
import {
  type JournalReplay,
  openJournalRecordReader,
  type RecordPlace,
  replayJournal,
  replayJournalFile,
  writesOf,
} from '../../src/sync/journal/replay.js';
import { defaultJournalPath, normaliseTargetUrl, openJournal } from '../../src/sync/journal/writer.js';
import { recordsOf } from '../helpers/journal-records.js';
import { makeTempDir } from '../helpers/temp-dir.js';

const SHA = 'a'.repeat(64);
const begin: JournalRecord = {
  kind: 'begin',
  formatVersion: 1,
  snapshotSha256: SHA,
  targetUrl: 'http://127.0.0.1:9000',
  tool: 'dds-migrate test',
  at: '2026-01-01T00:00:00.000Z',
};
const at = '2026-01-01T00:00:01.000Z';
/** The newest run's last write of each connection, by name. */
const connectionWrites = (replay: JournalReplay) => writesOf(replay.runs.at(-1), 'connection');
const lines = (records: readonly JournalRecord[]) => records.map((r) => `${JSON.stringify(r)}\n`).join('');

describe('replayJournal', () => {
  it('refuses a record nested too deeply to use (a damaged journal), naming its line, instead of overflowing later', () => {
    const image = (depth: number) =>
      `{"name":"a","type":"s3","x":${'{"a":'.repeat(depth)}{}${'}'.repeat(depth)}}`;
    const record = (depth: number) =>
      `{"kind":"intent","object":"connection","op":"create","name":"a","targetName":"a","attempt":1,"at":"${at}","image":${image(depth)}}\n`;
    const error = (() => {
      try {
        replayJournal(`${JSON.stringify(begin)}\n${record(20_000)}`, 'j.jsonl');
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InputFileError);
    expect((error as Error).message).toMatch(/j\.jsonl:2: a record nested more than 1064 levels deep/);
    // An image of a connection 1000 levels deep is a record 1002 deep: read as usual.
    expect(replayJournal(`${JSON.stringify(begin)}\n${record(998)}`).runs).toHaveLength(1);
  });

  it('folds records into per-name states: done, failed, in doubt', () => {
    const text = lines([
      begin,
      {
        kind: 'intent',
        object: 'connection',
        op: 'create',
        name: 'a',
        targetName: 'a',
        sourceId: 's-a',
        attempt: 1,
        at,
      },
      {
        kind: 'outcome',
        object: 'connection',
        op: 'create',
        result: 'created',
        name: 'a',
        targetName: 'a',
        targetId: 't-a',
        via: 'post',
        at,
      },
      { kind: 'intent', object: 'connection', op: 'create', name: 'b', targetName: 'b', attempt: 1, at },
      {
        kind: 'outcome',
        object: 'connection',
        op: 'create',
        result: 'failed',
        name: 'b',
        targetName: 'b',
        httpStatus: 400,
        message: 'bad',
        at,
      },
      { kind: 'intent', object: 'connection', op: 'create', name: 'c', targetName: 'c (2)', attempt: 1, at },
    ]);
    const replay = replayJournal(text);
    expect(replay.begin?.snapshotSha256).toBe(SHA);
    expect(connectionWrites(replay).get('a')).toMatchObject({
      op: 'create',
      state: 'done',
      targetName: 'a',
      targetId: 't-a',
      sourceId: 's-a',
    });
    expect(connectionWrites(replay).get('b')).toMatchObject({
      state: 'failed',
      httpStatus: 400,
      message: 'bad',
    });
    expect(connectionWrites(replay).get('c')).toMatchObject({ state: 'in-doubt', targetName: 'c (2)' });
    expect(replay.tornTail).toBe(false);
    expect(replay.validBytes).toBe(Buffer.byteLength(text));
  });

  it('a later intent puts a failed entry back in doubt', () => {
    const replay = replayJournal(
      lines([
        begin,
        { kind: 'intent', object: 'connection', op: 'create', name: 'b', targetName: 'b', attempt: 1, at },
        {
          kind: 'outcome',
          object: 'connection',
          op: 'create',
          result: 'failed',
          name: 'b',
          targetName: 'b',
          httpStatus: 400,
          message: 'bad',
          at,
        },
        { kind: 'resume', tool: 't', at },
        { kind: 'intent', object: 'connection', op: 'create', name: 'b', targetName: 'b', attempt: 1, at },
      ]),
    );
    expect(connectionWrites(replay).get('b')?.state).toBe('in-doubt');
  });

  it('a withdrawn intent (written ahead, never sent) puts back what its object was before it', () => {
    const intent = (name: string, attempt: number): JournalRecord => ({
      kind: 'intent',
      run: 1,
      object: 'connection',
      op: 'create',
      name,
      targetName: name,
      attempt,
      at,
    });
    const withdrawn = (name: string, attempt: number): JournalRecord => ({
      kind: 'withdrawn',
      run: 1,
      object: 'connection',
      name,
      targetName: name,
      attempt,
      at,
    });
    const failed: JournalRecord = {
      kind: 'outcome',
      run: 1,
      object: 'connection',
      op: 'create',
      result: 'failed',
      name: 'b',
      targetName: 'b',
      httpStatus: 400,
      message: 'bad',
      at,
    };
    const replay = replayJournal(
      lines([
        { ...begin, formatVersion: 2 },
        { kind: 'run', run: 1, command: 'import', tool: 't', at },
        // a: never written before; b: failed, then a second try withdrawn; c: in doubt (attempt 1), then
        // attempt 2 withdrawn; d: a withdrawal naming another attempt changes nothing.
        intent('a', 1),
        withdrawn('a', 1),
        intent('b', 1),
        failed,
        intent('b', 2),
        withdrawn('b', 2),
        intent('c', 1),
        intent('c', 2),
        withdrawn('c', 2),
        intent('d', 1),
        withdrawn('d', 2),
      ]),
    );
    const writes = connectionWrites(replay);
    expect(writes.has('a')).toBe(false);
    expect(writes.get('b')).toMatchObject({ state: 'failed', message: 'bad' });
    expect(writes.get('c')).toMatchObject({ state: 'in-doubt', attempt: 1 });
    expect(writes.get('d')).toMatchObject({ state: 'in-doubt', attempt: 1 });
    expect(() => replayJournal(lines([begin, { ...withdrawn('a', 1), attempt: 'x' } as never]))).toThrow(
      /withdrawn needs an attempt/,
    );
  });

  it('ignores a torn last line and reports the valid length', () => {
    const whole = lines([
      begin,
      { kind: 'intent', object: 'connection', op: 'create', name: 'a', targetName: 'a', attempt: 1, at },
    ]);
    const torn = `${whole}{"kind":"outcome","res`;
    const replay = replayJournal(torn);
    expect(replay.tornTail).toBe(true);
    expect(replay.validBytes).toBe(Buffer.byteLength(whole));
    expect(connectionWrites(replay).get('a')?.state).toBe('in-doubt');
  });

  it('refuses a damaged complete line, naming it', () => {
    const text = `${lines([begin])}not json\n${lines([{ kind: 'resume', tool: 't', at }])}`;
    expect(() => replayJournal(text, 'j.jsonl')).toThrow(InputFileError);
    expect(() => replayJournal(text, 'j.jsonl')).toThrow(/j\.jsonl:2/);
  });

  it('refuses a journal that does not start with begin, and unknown kinds', () => {
    expect(() => replayJournal(lines([{ kind: 'resume', tool: 't', at }]))).toThrow(/first record/);
    expect(() => replayJournal(`${lines([begin])}{"kind":"nope"}\n`)).toThrow(/unknown record kind/);
  });

  it('replays a journal truncated at any byte to a valid prefix of its records', () => {
    const recordArb: fc.Arbitrary<JournalRecord> = fc.oneof(
      fc.record({
        kind: fc.constant('intent' as const),
        object: fc.constant('connection' as const),
        op: fc.constant('create' as const),
        name: fc.stringMatching(/^[a-zé ()_-]{1,12}$/),
        targetName: fc.stringMatching(/^[a-z ()]{1,12}$/),
        attempt: fc.integer({ min: 1, max: 5 }),
        at: fc.constant(at),
      }),
      fc.record({
        kind: fc.constant('outcome' as const),
        object: fc.constant('connection' as const),
        op: fc.constant('create' as const),
        result: fc.constant('created' as const),
        name: fc.stringMatching(/^[a-zé]{1,12}$/),
        targetName: fc.stringMatching(/^[a-z]{1,12}$/),
        targetId: fc.option(fc.stringMatching(/^[0-9a-f]{24}$/), { nil: undefined }),
        via: fc.constantFrom('post' as const, 'lookup' as const),
        at: fc.constant(at),
      }),
      fc.record({
        kind: fc.constant('outcome' as const),
        object: fc.constant('connection' as const),
        op: fc.constant('create' as const),
        result: fc.constant('failed' as const),
        name: fc.stringMatching(/^[a-z]{1,12}$/),
        targetName: fc.stringMatching(/^[a-z]{1,12}$/),
        httpStatus: fc.constantFrom(400, 404, 409),
        message: fc.string({ maxLength: 30 }),
        at: fc.constant(at),
      }),
    );
    fc.assert(
      fc.property(fc.array(recordArb, { maxLength: 12 }), fc.nat(), (records, cutSeed) => {
        const all = [begin, ...records];
        const full = Buffer.from(lines(all), 'utf8');
        const cut = cutSeed % (full.length + 1);
        // Cutting bytes can split a multi-byte character: decode leniently, as reading the file would.
        const text = full.subarray(0, cut).toString('utf8');
        const replay = replayJournal(text);
        // The records replayed are exactly the complete lines within the cut.
        const expected = lines(all);
        let count = 0;
        let bytes = 0;
        for (const r of all) {
          const len = Buffer.byteLength(`${JSON.stringify(r)}\n`);
          if (bytes + len > cut) break;
          bytes += len;
          count += 1;
        }
        expect(recordsOf(text).length).toBe(count);
        expect(replay.validBytes).toBe(bytes);
        expect(JSON.stringify(recordsOf(text))).toBe(
          JSON.stringify(JSON.parse(`[${expected.split('\n').slice(0, count).join(',')}]`)),
        );
        // And the prefix replays to the same state as replaying those records directly.
        const again = replayJournal(lines(all.slice(0, count)));
        expect([...connectionWrites(replay)]).toEqual([...connectionWrites(again)]);
      }),
      { numRuns: 300 },
    );
  });
});

/** A connection create's intent and outcome records (the replay tests' data). */
const createIntent = (name: string, image?: Record<string, unknown>): JournalRecord => ({
  kind: 'intent',
  object: 'connection',
  op: 'create',
  name,
  targetName: name,
  ...(image === undefined ? {} : { image }),
  attempt: 1,
  at,
});
const createdOutcome = (name: string, targetId: string): JournalRecord => ({
  kind: 'outcome',
  object: 'connection',
  op: 'create',
  result: 'created',
  name,
  targetName: name,
  targetId,
  via: 'post',
  at,
});

describe('replayJournalFile', () => {
  it('replays a file as replayJournal replays its text: across 256 KiB chunks, multi-byte names, a torn tail', async () => {
    const dir = await makeTempDir('dds-journal-file-');
    const records: JournalRecord[] = [begin];
    // About 1 MB: lines cross the reader's chunk boundaries, some of them inside a multi-byte character.
    for (let i = 0; i < 6000; i++) {
      const name = `conn-é-🦊-${i}`;
      records.push(createIntent(name));
      if (i % 3 !== 0) records.push(createdOutcome(name, `id-${i}`));
    }
    for (const tail of ['', '{"kind":"outcome","na', '   ']) {
      const text = lines(records) + tail;
      const path = join(dir, `j${tail.length}.jsonl`);
      await writeFile(path, text);
      const read = await replayJournalFile(path);
      const expected = replayJournal(text, path);
      expect(read?.size).toBe(Buffer.byteLength(text));
      expect(read?.replay.validBytes).toBe(expected.validBytes);
      expect(read?.replay.tornTail).toBe(expected.tornTail);
      expect(read && [...connectionWrites(read.replay)]).toEqual([...connectionWrites(expected)]);
      const reread: unknown[] = [];
      await replayJournalFile(path, { onRecord: (r) => reread.push(r) });
      expect(reread).toEqual(recordsOf(text));
    }
    expect(await replayJournalFile(join(dir, 'absent.jsonl'))).toBeUndefined();
  });

  it('hands out where each record is, and reads it back there; a changed line is refused', async () => {
    const dir = await makeTempDir('dds-journal-places-');
    const path = join(dir, 'j.jsonl');
    const records: JournalRecord[] = [begin];
    for (const name of ['a', 'é-🦊', 'c']) {
      records.push(createIntent(name, { name, type: 's3', password: '******' }));
    }
    await writeFile(path, `${lines(records)}\n`);
    const seen: [JournalRecord, RecordPlace][] = [];
    await replayJournalFile(path, { onRecord: (r, place) => seen.push([r, place]) });
    expect(seen.map(([r]) => r)).toEqual(records);
    const reader = openJournalRecordReader(path);
    try {
      for (const [record, place] of seen) expect(reader.read(place)).toEqual(record);
      const last = seen[3]?.[1] as RecordPlace;
      expect(() => reader.read({ offset: last.offset + 1, length: last.length })).toThrow(InputFileError);
    } finally {
      reader.close();
    }
  });

  it('holds no records, and still folds every one into the states', async () => {
    const text = lines([begin, createIntent('a'), createdOutcome('a', 'id-a')]);
    const replay = replayJournal(text, 'j');
    expect('records' in replay).toBe(false);
    expect(connectionWrites(replay).get('a')).toMatchObject({ state: 'done', targetId: 'id-a' });
  });
});

describe('normaliseTargetUrl and defaultJournalPath', () => {
  it('ignores case, trailing slashes and /api/v1', () => {
    expect(normaliseTargetUrl('HTTP://Host:8080/api/v1/')).toBe(normaliseTargetUrl('http://host:8080'));
  });
  it('names the journal after the snapshot and the target host with its port', () => {
    expect(defaultJournalPath('/x/prod.snapshot.jsonl', 'http://127.0.0.1:8080')).toBe(
      '/x/prod.snapshot.jsonl.127.0.0.1_8080.journal.jsonl',
    );
  });
});

describe('openJournal', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await makeTempDir('journal-');
  });
  const binding = { snapshotSha256: SHA, targetUrl: 'http://127.0.0.1:9000' };

  it('begins a journal with mode 0600, fsyncs appends and replays them on reopen', async () => {
    const path = join(dir, 'j.jsonl');
    const j = await openJournal(path, binding, { tool: 't' });
    expect(j.fresh).toBe(true);
    await Promise.all([
      j.append({
        kind: 'intent',
        object: 'connection',
        op: 'create',
        name: 'a',
        targetName: 'a',
        attempt: 1,
        at,
      }),
      j.append({
        kind: 'intent',
        object: 'connection',
        op: 'create',
        name: 'b',
        targetName: 'b',
        attempt: 1,
        at,
      }),
    ]);
    await j.append({
      kind: 'outcome',
      object: 'connection',
      op: 'create',
      result: 'created',
      name: 'a',
      targetName: 'a',
      targetId: 'x',
      via: 'post',
      at,
    });
    await j.close();
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const again = await openJournal(path, binding, { tool: 't' });
    expect(again.fresh).toBe(false);
    expect(connectionWrites(again.replay).get('a')?.state).toBe('done');
    expect(connectionWrites(again.replay).get('b')?.state).toBe('in-doubt');
    await again.close();
  });

  it('truncates a torn tail away on reopen', async () => {
    const path = join(dir, 'j.jsonl');
    await writeFile(path, `${lines([begin])}{"kind":"inte`);
    const j = await openJournal(path, binding, { tool: 't' });
    await j.close();
    const text = await readFile(path, 'utf8');
    expect(
      text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).kind),
    ).toEqual(['begin']);
  });

  it('refuses a journal bound to another snapshot or another target', async () => {
    const path = join(dir, 'j.jsonl');
    await (await openJournal(path, binding, { tool: 't' })).close();
    await expect(
      openJournal(path, { ...binding, snapshotSha256: 'b'.repeat(64) }, { tool: 't' }),
    ).rejects.toThrow(/another snapshot/);
    await expect(
      openJournal(path, { ...binding, targetUrl: 'http://127.0.0.1:9001' }, { tool: 't' }),
    ).rejects.toThrow(/another target/);
    // The refused opens released the lock: the right binding still opens.
    await (
      await openJournal(path, { ...binding, targetUrl: 'HTTP://127.0.0.1:9000/api/v1' }, { tool: 't' })
    ).close();
  });

  it('refuses a second run while the lock is held by a live process', async () => {
    const path = join(dir, 'j.jsonl');
    const first = await openJournal(path, binding, { tool: 't' });
    const second = openJournal(path, binding, { tool: 't' });
    await expect(second).rejects.toThrow(UsageError);
    await expect(openJournal(path, binding, { tool: 't' })).rejects.toThrow(
      /Another import is using this journal/,
    );
    await first.close();
    await (await openJournal(path, binding, { tool: 't' })).close();
  });

  it('takes over a lock left by a dead process', async () => {
    const path = join(dir, 'j.jsonl');
    const child = spawnSync(process.execPath, ['-e', '0']);
    expect(child.pid).toBeGreaterThan(0);
    await writeFile(`${path}.lock`, JSON.stringify({ pid: child.pid, hostname: hostname(), startedAt: at }));
    const j = await openJournal(path, binding, { tool: 't' });
    const lock = JSON.parse(await readFile(`${path}.lock`, 'utf8')) as { pid: number };
    expect(lock.pid).toBe(process.pid);
    await j.close();
  });

  it('takes over a lock holding our own pid that this process does not hold (a restarted PID 1)', async () => {
    const path = join(dir, 'j.jsonl');
    await writeFile(
      `${path}.lock`,
      JSON.stringify({ pid: process.pid, hostname: hostname(), startedAt: '2020-01-01T00:00:00.000Z' }),
    );
    const j = await openJournal(path, binding, { tool: 't' });
    const lock = JSON.parse(await readFile(`${path}.lock`, 'utf8')) as { startedAt: string };
    expect(lock.startedAt).not.toBe('2020-01-01T00:00:00.000Z');
    await expect(openJournal(path, binding, { tool: 't' })).rejects.toThrow(/Another import is using/);
    await j.close();
  });

  it('lets exactly one of many concurrent runs take over the same stale lock', async () => {
    for (let round = 0; round < 20; round++) {
      const path = join(dir, `race-${round}.jsonl`);
      const child = spawnSync(process.execPath, ['-e', '0']);
      await writeFile(
        `${path}.lock`,
        JSON.stringify({ pid: child.pid, hostname: hostname(), startedAt: at }),
      );
      const opens = await Promise.allSettled(
        Array.from({ length: 4 }, () => openJournal(path, binding, { tool: 't' })),
      );
      const taken = opens.filter((o) => o.status === 'fulfilled');
      expect(taken).toHaveLength(1);
      for (const o of taken) await (o as PromiseFulfilledResult<{ close(): Promise<void> }>).value.close();
    }
  });
});
