/**
 * The pure rules of `verify` (state counts, test verdicts, exit decision) and its test runner with a
 * fake client: one request per target, an unknown answer reported as such, a 4xx as that connection's
 * error, a rejected token ending the run.
 */
import { describe, expect, it } from 'vitest';
import type { HttpClient, HttpRequest } from '../../src/api/http.js';
import { nameDataSources } from '../../src/diff/scan-profiles.js';
import type { DiffOptions } from '../../src/diff/types.js';
import { ApiError, AuthError } from '../../src/errors.js';
import type { Connection } from '../../src/model/connection.js';
import { createRateLimiter } from '../../src/sync/throttle.js';
import { createConnectionVerifier } from '../../src/verify/connections.js';
import { verifyProfiles } from '../../src/verify/profiles.js';
import { runConnectionTests, type TestTarget } from '../../src/verify/test-connections.js';
import {
  countTests,
  isComplete,
  isVerified,
  judgeTest,
  readRecordedTest,
  type VerifyItem,
} from '../../src/verify/verdict.js';

describe('readRecordedTest', () => {
  it('reads connectionStatusTest.is_success as a boolean or its text, else none', () => {
    expect(readRecordedTest({ connectionStatusTest: { is_success: true } })).toBe('succeeded');
    expect(readRecordedTest({ connectionStatusTest: { is_success: 'true' } })).toBe('succeeded');
    expect(readRecordedTest({ connectionStatusTest: { is_success: false } })).toBe('failed');
    expect(readRecordedTest({ connectionStatusTest: { is_success: 'false' } })).toBe('failed');
    expect(readRecordedTest({ connectionStatusTest: {} })).toBe('none');
    expect(readRecordedTest({ connectionStatusTest: null })).toBe('none');
    expect(readRecordedTest({})).toBe('none');
  });
});

describe('judgeTest', () => {
  it('a failure is a regression only when the last recorded test succeeded', () => {
    const failed = { kind: 'failed', message: 'refused' } as const;
    expect(judgeTest(failed, 'succeeded')).toEqual({ kind: 'regression', message: 'refused' });
    expect(judgeTest(failed, 'failed')).toEqual({
      kind: 'known-bad',
      recorded: 'failed',
      message: 'refused',
    });
    expect(judgeTest(failed, 'none')).toEqual({ kind: 'known-bad', recorded: 'none', message: 'refused' });
  });
  it('a success passes, an unknown answer stays unknown whatever was recorded', () => {
    expect(judgeTest({ kind: 'succeeded', message: undefined }, 'failed')).toEqual({ kind: 'passed' });
    expect(judgeTest({ kind: 'unknown', message: 'x' }, 'succeeded')).toEqual({
      kind: 'unknown',
      message: 'x',
    });
  });
});

describe('exit decision', () => {
  const item = (state: VerifyItem['state'], test?: VerifyItem['test']): VerifyItem => ({
    object: 'connection',
    name: 'n',
    state,
    ...(test ? { test } : {}),
  });
  it('complete and no regression verifies; extra objects do not matter; known-bad does not fail it', () => {
    expect(isVerified([item('present'), item('extra')])).toBe(true);
    expect(isVerified([item('present', { kind: 'known-bad', recorded: 'failed' })])).toBe(true);
    expect(isVerified([item('missing')])).toBe(false);
    expect(isVerified([item('different')])).toBe(false);
    expect(isComplete([item('present', { kind: 'regression' })])).toBe(true);
    expect(isVerified([item('present', { kind: 'regression' })])).toBe(false);
  });
  it('counts every verdict kind', () => {
    expect(
      countTests([item('present', { kind: 'passed' }), item('present', { kind: 'unknown' }), item('extra')]),
    ).toEqual({
      passed: 1,
      regression: 0,
      'known-bad': 0,
      unknown: 1,
      error: 0,
    });
  });
});

/** Both sides whole through the verifier the workflow streams the snapshot and the environment into. */
function verifyConnections(
  snapshot: readonly Connection[],
  environment: readonly Connection[],
  compare: DiffOptions,
) {
  const verifier = createConnectionVerifier(compare, true);
  for (const entry of snapshot) verifier.expect(entry, () => entry);
  for (const actual of environment) verifier.add(actual);
  return verifier.finish();
}

describe('createConnectionVerifier', () => {
  const compare = { secretFields: () => new Set<string>() };
  it('uses the comparison of diff: server-managed fields ignored, a changed secret masked', () => {
    const snapshot = [
      { _id: 'a1', name: 'a', type: 's3', bucket_name: 'x', connectionStatusTest: { is_success: true } },
      { _id: 'a2', name: 'b', type: 'rdb-mysql', password: 'Old-Secret-1' },
    ];
    const live = [
      { _id: 'b1', name: 'a', type: 's3', bucket_name: 'x', updated_at: 'now' },
      { _id: 'b2', name: 'b', type: 'rdb-mysql', password: 'New-Secret-2' },
    ];
    const { items, present } = verifyConnections(snapshot, live, compare);
    expect(items.map((i) => [i.name, i.state])).toEqual([
      ['a', 'present'],
      ['b', 'different'],
    ]);
    expect(JSON.stringify(items)).not.toMatch(/Secret-/);
    expect(items[1]?.fields).toEqual([{ path: '/password', from: '******', to: '******' }]);
    expect(present).toEqual([{ connection: live[0], recorded: 'succeeded' }]);
  });
  it('refuses an environment holding two connections of one name', () => {
    const live = [
      { name: 'a', type: 's3' },
      { name: 'a', type: 's3' },
    ];
    expect(() => verifyConnections([{ name: 'a', type: 's3' }], live, compare)).toThrow(
      /more than one connection named "a"/,
    );
  });
});

/** A client answering each test with `answer(name)`, recording the bodies it was sent. */
function fakeClient(answer: (name: string) => unknown): { client: HttpClient; sent: HttpRequest[] } {
  const sent: HttpRequest[] = [];
  const client = {
    async request(request: HttpRequest) {
      sent.push(request);
      const name = (request.body as { ds_connection: { name: string } }).ds_connection.name;
      const result = answer(name);
      if (result instanceof Error) throw result;
      return result;
    },
    close() {},
  } as unknown as HttpClient;
  return { client, sent };
}

const targets: TestTarget[] = ['a', 'b', 'c', 'd'].map((name) => ({
  connection: { name, type: 's3' },
  recorded: 'succeeded',
}));

describe('runConnectionTests', () => {
  it("sends one test per target with isNewPassword false; reads each answer shape; a 4xx is that connection's error", async () => {
    const { client, sent } = fakeClient((name) => {
      if (name === 'a') return { operationStatus: 'SUCCESS' };
      if (name === 'b') return { success: false, message: 'denied' };
      if (name === 'c') return { verdict: 'green' };
      return new ApiError({
        method: 'POST',
        path: '/api/v1/ds-connection-test',
        status: 400,
        serviceMessage: 'bad body',
      });
    });
    const settled: string[] = [];
    const verdicts = await runConnectionTests(targets, {
      client,
      limiter: createRateLimiter(),
      concurrency: 2,
      signal: new AbortController().signal,
      onSettled: (name) => settled.push(name),
    });
    expect(sent.map((r) => [r.method, r.path, (r.body as { isNewPassword: boolean }).isNewPassword])).toEqual(
      targets.map(() => ['POST', '/ds-connection-test', false]),
    );
    expect(verdicts.get('a')).toEqual({ kind: 'passed' });
    expect(verdicts.get('b')).toEqual({ kind: 'regression', message: 'denied' });
    expect(verdicts.get('c')?.kind).toBe('unknown');
    expect(verdicts.get('d')).toMatchObject({ kind: 'error', status: 400 });
    expect(settled.sort()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('a rejected token ends the run: no test is started after it, and it is thrown', async () => {
    const { client, sent } = fakeClient((name) =>
      name === 'a' ? new AuthError('token rejected') : { success: true },
    );
    await expect(
      runConnectionTests(targets, {
        client,
        limiter: createRateLimiter(),
        concurrency: 1,
        signal: new AbortController().signal,
        onSettled: () => {},
      }),
    ).rejects.toBeInstanceOf(AuthError);
    expect(sent).toHaveLength(1);
  });

  it('Ctrl-C before the tests: nothing is sent, the run is interrupted', async () => {
    const { client, sent } = fakeClient(() => ({ success: true }));
    const controller = new AbortController();
    controller.abort();
    await expect(
      runConnectionTests(targets, {
        client,
        limiter: createRateLimiter(),
        concurrency: 2,
        signal: controller.signal,
        onSettled: () => {},
      }),
    ).rejects.toMatchObject({ code: 'E_INTERRUPTED' });
    expect(sent).toEqual([]);
  });
});

describe('verifyProfiles (snapshot format 2)', () => {
  const connections = new Map([
    ['e1', 'hr-mysql'],
    ['e2', 'logs-s3'],
  ]);
  const side = (profile: Record<string, unknown>, names: (string | null)[]) => ({
    profile,
    dataSourceNames: names,
  });
  it('compares dataSourceList by connection names, ignores service fields, names what differs', () => {
    const snapshot = [
      side(
        {
          _id: 's1',
          name: 'Nightly',
          dataSourceList: ['a1', 'a2'],
          schedule: { cronExpression: '0 2 * * *', timeZone: 'UTC' },
        },
        ['hr-mysql', 'logs-s3'],
      ),
      side(
        {
          _id: 's2',
          name: 'Weekly',
          dataSourceList: ['a1'],
          schedule: { cronExpression: '0 3 * * 1', timeZone: 'UTC' },
        },
        ['hr-mysql'],
      ),
      side({ _id: 's3', name: 'Gone', dataSourceList: ['a1'], isSingleRunScan: true }, ['hr-mysql']),
    ];
    const live = [
      {
        _id: 't1',
        name: 'Nightly',
        dataSourceList: ['e1', 'logs-s3'],
        schedule: { cronExpression: '0 2 * * *', timeZone: 'UTC' },
        updatedAt: 'x',
      },
      {
        _id: 't2',
        name: 'Weekly',
        dataSourceList: ['e2'],
        schedule: { cronExpression: '0 4 * * 1', timeZone: 'UTC' },
      },
      { _id: 't4', name: 'Stray', dataSourceList: [] },
    ].map((p) => side(p, nameDataSources(p, connections)));
    const items = verifyProfiles(snapshot, live);
    expect(items.map((i) => [i.object, i.name, i.state])).toEqual([
      ['scan profile', 'Gone', 'skipped'],
      ['scan profile', 'Nightly', 'present'],
      ['scan profile', 'Stray', 'extra'],
      ['scan profile', 'Weekly', 'different'],
    ]);
    expect(items[0]?.note).toMatch(/one-time profile/);
    expect(items[3]?.fields).toEqual([
      { path: '/dataSourceList', from: ['hr-mysql'], to: ['logs-s3'] },
      { path: '/schedule/cronExpression', from: '0 3 * * 1', to: '0 4 * * 1' },
    ]);
  });
  it('an element naming no connection of the environment is kept as it is (null name)', () => {
    expect(nameDataSources({ dataSourceList: ['e1', 'zz', 7] }, connections)).toEqual([
      'hr-mysql',
      null,
      null,
    ]);
  });
});
