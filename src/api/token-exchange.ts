/**
 * A static token, or a user token exchanged for a session token (GET /refresh-access-token, the user token as
 * the header value itself: api-notes). Single-flight: concurrent 401s on one token trigger one exchange.
 */
import type { ResolvedEnvironment } from '../config.js';
import { ApiError, AuthError, InterruptedError } from '../errors.js';
import type { Logger } from '../log.js';
import { registerSecret } from '../secrets.js';
import { extractServiceMessage } from './service-error.js';

/** Rejected with InterruptedError on `signal`'s abort; one shared listener a signal (more made Node warn). */
const abortedBySignal = new WeakMap<AbortSignal, Promise<never>>();
function abortedOf(signal: AbortSignal): Promise<never> {
  let aborted = abortedBySignal.get(signal);
  if (aborted === undefined) {
    aborted = new Promise<never>((_resolve, reject) => {
      signal.addEventListener('abort', () => reject(new InterruptedError()), { once: true });
    });
    aborted.catch(() => undefined);
    abortedBySignal.set(signal, aborted);
  }
  return aborted;
}

export interface TokenExchange {
  /** The Authorization value of the current token (read per attempt: an exchange may replace it). */
  authorization(): string | undefined;
  /** Bumped on each exchange, so a 401 on an older token does not exchange again. */
  generation(): number;
  /** Exchange the user token for a session token (single-flight); no-op without a user token. */
  exchange(signal: AbortSignal | undefined): Promise<void>;
  /** Exchange once before the first request when there is a user token and no session token yet. */
  ensureToken(signal: AbortSignal | undefined): Promise<void>;
}

/** The token state of `environment`; `send` sends the exchange with the user token as Authorization. */
export function createTokenExchange(
  environment: ResolvedEnvironment,
  log: Logger,
  send: (userToken: string, signal: AbortSignal | undefined) => Promise<unknown>,
): TokenExchange {
  let token = environment.token;
  if (token) registerSecret(token);
  if (environment.refreshToken) registerSecret(environment.refreshToken);
  let tokenGeneration = 0;
  // The shared exchange in flight; its own signal aborts once every waiter gave up (one must not fail others).
  let exchanging:
    | { readonly done: Promise<void>; readonly stop: AbortController; waiters: number }
    | undefined;
  const path = '/api/v1/refresh-access-token';
  // Names the variable of the user token (never the token).
  const refreshHint = `Check the user token in ${environment.refreshTokenSource ?? 'the variable named by refreshTokenEnv'}`;

  async function exchangeOnce(refreshToken: string, signal: AbortSignal | undefined): Promise<void> {
    let body: unknown;
    try {
      body = await send(refreshToken, signal);
    } catch (error) {
      // `success:false` at HTTP 200, a 401 or another 4xx: the user token itself was refused.
      const refused =
        (error instanceof ApiError && !error.isTransient()) ||
        (error instanceof AuthError && error.http !== undefined);
      if (refused) {
        const http = (error as ApiError | AuthError).http as NonNullable<AuthError['http']>;
        throw new AuthError(`The service refused to exchange the user token of ${environment.label}`, http, {
          hint: refreshHint,
          cause: { status: http.status, path: http.path },
        });
      }
      throw error;
    }
    const record = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
    if (record.success !== true || typeof record.systemToken !== 'string' || record.systemToken === '') {
      const said = extractServiceMessage(body);
      throw new AuthError(
        `The service refused to exchange the user token of ${environment.label}`,
        { method: 'GET', path, status: 200, ...(said === undefined ? {} : { serviceMessage: said }) },
        { hint: refreshHint },
      );
    }
    registerSecret(record.systemToken);
    token = record.systemToken;
    tokenGeneration += 1;
    log.debug({ generation: tokenGeneration }, 'exchanged the user token for a session token');
  }

  function startExchange(refreshToken: string): NonNullable<typeof exchanging> {
    const stop = new AbortController();
    const flight = { done: exchangeOnce(refreshToken, stop.signal), stop, waiters: 0 };
    flight.done
      .finally(() => {
        if (exchanging === flight) exchanging = undefined;
      })
      // Every waiter may have given up before it settles.
      .catch(() => undefined);
    return flight;
  }

  const exchange = async (signal: AbortSignal | undefined): Promise<void> => {
    const refreshToken = environment.refreshToken;
    if (!refreshToken) return;
    if (signal?.aborted) throw new InterruptedError();
    exchanging ??= startExchange(refreshToken);
    const flight = exchanging;
    flight.waiters += 1;
    try {
      await (signal === undefined ? flight.done : Promise.race([flight.done, abortedOf(signal)]));
    } finally {
      flight.waiters -= 1;
      if (flight.waiters === 0 && exchanging === flight && signal?.aborted === true) {
        exchanging = undefined;
        flight.stop.abort();
      }
    }
  };

  return {
    authorization: () =>
      token === undefined ? undefined : environment.authScheme === 'raw' ? token : `Bearer ${token}`,
    generation: () => tokenGeneration,
    exchange,
    async ensureToken(signal) {
      if (token === undefined && environment.refreshToken) await exchange(signal);
    },
  };
}
