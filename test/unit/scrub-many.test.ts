/**
 * `scrub` with many known secrets (an import or a verify of many sources): the text is read once, and
 * the result is the one searching for each secret in turn gives.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { clearRegisteredSecrets, MASK, registerSecret, scrub } from '../../src/secrets.js';

afterEach(() => clearRegisteredSecrets());

/** The definition: every secret, longest first, replaced wherever it occurs. */
function searchEach(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) out = out.split(secret).join(MASK);
  return out;
}

const secretArb = fc.string({
  unit: fc.constantFrom(...'abcdefghij0123456789é🦊'),
  minLength: 4,
  maxLength: 12,
});
const fillerArb = fc.string({ unit: fc.constantFrom(...'XYZ ,:"{}\n'), minLength: 1, maxLength: 8 });

describe('scrub with many known secrets', () => {
  it('masks every occurrence as searching for each secret does (secrets apart from each other)', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(secretArb, { minLength: 40, maxLength: 80 }),
        fc.array(fc.tuple(fillerArb, fc.nat()), { maxLength: 60 }),
        fillerArb,
        (secrets, parts, tail) => {
          clearRegisteredSecrets();
          for (const secret of secrets) registerSecret(secret);
          const text =
            parts.map(([filler, i]) => filler + (secrets[i % secrets.length] as string)).join('') + tail;
          const scrubbed = scrub(text);
          expect(scrubbed).toBe(searchEach(text, secrets));
          for (const secret of secrets) expect(scrubbed).not.toContain(secret);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('reads a large text once: 100 000 secrets, a 10 MB text, each of them in it', () => {
    const secrets = Array.from(
      { length: 100_000 },
      (_, i) => `pw-${i.toString(36)}-${(i * 7919).toString(36)}`,
    );
    for (const secret of secrets) registerSecret(secret);
    const text = secrets
      .map((s, i) => `{"name":"c${i}","password":"${s}","description":"${'x'.repeat(60)}"}`)
      .join('\n');
    const scrubbed = scrub(text);
    expect(scrubbed.split(MASK).length - 1).toBe(secrets.length);
    for (const secret of secrets.slice(0, 50)) expect(scrubbed).not.toContain(secret);
  });
});

describe('a secret of digits only (a PIN)', () => {
  const texts = (pin: string) => ({
    alone: [`"pin":"${pin}"`, `pin ${pin}.`, `a${pin}b`, `${pin}`, `x-${pin}-y`],
    inside: [`"time":17954${pin}042`, `"id":${pin}7`, `9${pin}`],
  });
  for (const many of [false, true]) {
    it(`is masked where it stands alone, not inside a longer number (${many ? 'many secrets' : 'few secrets'})`, () => {
      if (many) for (let i = 0; i < 40; i++) registerSecret(`other-secret-${i}`);
      registerSecret('453831');
      const { alone, inside } = texts('453831');
      for (const text of alone) expect(scrub(text)).toBe(text.replace('453831', MASK));
      // A log line's timestamp, an id: other numbers, left whole (masking them made JSON invalid).
      for (const text of inside) expect(scrub(text)).toBe(text);
      expect(scrub('{"time":1795447453831,"pin":"453831"}')).toBe(`{"time":1795447453831,"pin":"${MASK}"}`);
    });
  }
});
