/**
 * Session tokens issued by `GET /api/v1/refresh-access-token`: JWT-shaped (HS256, with `exp`), as
 * real deployments issue them, and valid for `ttlMs` exactly (kept server-side, since `exp` has
 * whole-second precision and tests use sub-second lifetimes).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

function b64url(data: string | Buffer): string {
  return Buffer.from(data).toString('base64url');
}

/** Issues and checks session tokens. */
export class SessionTokens {
  private readonly secret = randomBytes(32);
  private readonly expiries = new Map<string, number>();
  private ttlMs: number;

  constructor(ttlMs: number) {
    this.ttlMs = ttlMs;
  }

  /** A new token valid for the configured lifetime. */
  issue(): string {
    const now = Date.now();
    const expiresAt = now + this.ttlMs;
    const jti = randomBytes(8).toString('hex');
    const header = b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }));
    const payload = b64url(
      JSON.stringify({
        sub: 'emulator-session',
        jti,
        iat: Math.floor(now / 1000),
        exp: Math.ceil(expiresAt / 1000),
      }),
    );
    const sig = createHmac('sha256', this.secret).update(`${header}.${payload}`).digest('base64url');
    const token = `${header}.${payload}.${sig}`;
    this.expiries.set(token, expiresAt);
    this.prune(now);
    return token;
  }

  /** True when `token` was issued here and has not expired. */
  isValid(token: string): boolean {
    const expiresAt = this.expiries.get(token);
    if (expiresAt === undefined) return false;
    const [header, payload, sig] = token.split('.');
    if (header === undefined || payload === undefined || sig === undefined) return false;
    const expected = createHmac('sha256', this.secret).update(`${header}.${payload}`).digest();
    const given = Buffer.from(sig, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return false;
    return Date.now() < expiresAt;
  }

  private prune(now: number): void {
    if (this.expiries.size < 1000) return;
    for (const [t, exp] of this.expiries) if (exp <= now) this.expiries.delete(t);
  }
}
