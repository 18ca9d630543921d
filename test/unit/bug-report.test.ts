/**
 * An error that escapes every handler is reported like a bug (exit 70, the stack), never by Node's
 * default printer: that inspects the whole object, and an axios error's `config.headers` holds the
 * Authorization header.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { reportUncaught } from '../../src/cli/report-error.js';
import { clearRegisteredSecrets, registerSecret } from '../../src/secrets.js';

const TOKEN = 'CANARY-bug-token-61d0aa';
const PASSWORD = 'CANARY-bug-password-0f0f';

function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return { stream, text: () => Buffer.concat(chunks).toString('utf8') };
}

/** What an axios error looks like: a plain Error carrying the request config, headers included. */
function axiosLikeError(): Error {
  return Object.assign(new Error('Request failed with status code 500'), {
    isAxiosError: true,
    config: { headers: { Authorization: `Bearer ${TOKEN}` }, data: JSON.stringify({ password: PASSWORD }) },
    cause: { config: { headers: { Authorization: `Bearer ${TOKEN}` } } },
  });
}

afterEach(() => clearRegisteredSecrets());

describe('reportUncaught', () => {
  it('prints the stack of an axios-like error, not its config, even with no secret registered', () => {
    const err = capture();
    expect(reportUncaught(axiosLikeError(), err.stream)).toBe(70);
    const text = err.text();
    expect(text).toContain('this is a bug');
    expect(text).toContain('Request failed with status code 500');
    expect(text).not.toContain('CANARY');
  });

  it('names a thrown non-Error by its type only', () => {
    const err = capture();
    reportUncaught({ config: { headers: { Authorization: TOKEN } } }, err.stream);
    expect(err.text()).toContain('a thrown Object (not an Error)');
    expect(err.text()).not.toContain('CANARY');
  });

  it('scrubs a registered token and the input excerpt of a JSON.parse error', () => {
    registerSecret(TOKEN);
    const err = capture();
    reportUncaught(new Error(`failed with ${TOKEN}`), err.stream);
    let parseError: unknown;
    try {
      JSON.parse(`{"password":${PASSWORD}}`);
    } catch (error) {
      parseError = error;
    }
    reportUncaught(parseError, err.stream);
    expect(err.text()).toContain('failed with ******');
    expect(err.text()).toContain('SyntaxError');
    expect(err.text()).not.toContain('CANARY');
  });
});
