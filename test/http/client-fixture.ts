/** Shared set-up of the nock tests: an environment, a client with instant sleeps, recorded delays. */

import { createHttpClient, type HttpClient, type HttpClientOptions } from '../../src/api/http.js';
import type { ResolvedEnvironment } from '../../src/config.js';
import { createSilentLogger } from '../../src/log.js';

export const BASE = 'https://dds.test';
export const TOKEN = 'test-token-3b9f1c';

/** A resolved environment on {@link BASE}. */
export function makeEnvironment(overrides: Partial<ResolvedEnvironment> = {}): ResolvedEnvironment {
  return {
    name: 'test',
    label: 'test',
    url: BASE,
    token: TOKEN,
    refreshToken: undefined,
    authScheme: 'bearer',
    concurrency: undefined,
    rate: undefined,
    protected: false,
    caFile: undefined,
    insecureHttp: false,
    ...overrides,
  };
}

export interface TestClient {
  readonly client: HttpClient;
  /** Every backoff delay asked for, in order. */
  readonly sleeps: number[];
}

/** A client whose waits return at once (and are recorded) and whose jitter is a fixed 0.5. */
export function makeClient(
  environment: Partial<ResolvedEnvironment> = {},
  options: Partial<HttpClientOptions> = {},
): TestClient {
  const sleeps: number[] = [];
  const client = createHttpClient(makeEnvironment(environment), {
    log: createSilentLogger(),
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...options,
  });
  return { client, sleeps };
}

/** Collect an async iterable. */
export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** The rejection of a promise (fails the test if it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

/** A Node-style network error for nock's replyWithError (nock 14 needs an Error instance). */
export function networkError(code: string, message: string = code): Error {
  return Object.assign(new Error(message), { code });
}
