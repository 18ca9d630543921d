/**
 * The import's entries checked while the target is listed (src/importer/early-checks.ts): checked in
 * order until the listing settles, only the entries wanted, at most the limit; what is kept of each
 * entry reads the same references as the entry itself.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readReferences, referencingOnly } from '../../src/connections/references.js';
import { checkWhileWaiting, type EntryCheck } from '../../src/importer/early-checks.js';
import type { PlanEntry } from '../../src/importer/plan.js';

const entries: PlanEntry[] = Array.from({ length: 500 }, (_, i) => ({
  name: `e${String(i).padStart(3, '0')}`,
  type: 's3',
  sourceId: undefined,
}));

function checkOf(entry: PlanEntry): EntryCheck {
  return {
    problems: entry.name.endsWith('7') ? [{ entry: entry.name, message: 'bad' }] : [],
    warnings: [],
    referencing: {
      name: entry.name,
      type: entry.type,
      body: {
        name: entry.name,
        scanner_group: 'g',
        credential_id: 'c',
        password: 'secret',
        big: 'x'.repeat(100),
      },
    },
  };
}

describe('checkWhileWaiting', () => {
  it('checks every wanted entry while the listing is out, keeping only the reference fields of each', async () => {
    const never = new Promise<never>(() => undefined);
    const found = await checkWhileWaiting(entries, (e) => !e.name.endsWith('0'), never, checkOf);
    expect(found.size).toBe(450);
    expect(found.has('e010')).toBe(false);
    expect(found.get('e017')?.problems).toEqual([{ entry: 'e017', message: 'bad' }]);
    expect(found.get('e011')?.referencing).toEqual({
      name: 'e011',
      type: 's3',
      body: { scanner_group: 'g', credential_id: 'c' },
    });
  });

  it('stops once the listing has arrived, or failed', async () => {
    let arrive: () => void = () => undefined;
    const listing = new Promise<void>((resolve) => {
      arrive = resolve;
    });
    let checked = 0;
    const found = await checkWhileWaiting(
      entries,
      () => true,
      listing,
      (entry) => {
        checked += 1;
        if (checked === 40) arrive();
        return checkOf(entry);
      },
    );
    // The turn under way is finished (32 at a time), then no more.
    expect(found.size).toBe(64);
    expect([...found.keys()]).toEqual(entries.slice(0, 64).map((e) => e.name));

    const failed = Promise.reject(new Error('listing failed'));
    failed.catch(() => undefined);
    const none = await checkWhileWaiting(entries, () => true, failed, checkOf);
    expect(none.size).toBeLessThanOrEqual(32);
  });

  it('keeps at most its limit', async () => {
    const never = new Promise<never>(() => undefined);
    const found = await checkWhileWaiting(entries, () => true, never, checkOf, 100);
    expect(found.size).toBe(100);
  });
});

describe('referencingOnly', () => {
  it('reads the same references as the whole entry', () => {
    const value = fc.oneof(
      fc.constant(undefined),
      fc.constant(null),
      fc.boolean(),
      fc.constantFrom('', ' ', 'false', 'FALSE ', 'true', 'g1', 'cred-1'),
      fc.integer(),
    );
    fc.assert(
      fc.property(
        fc.record(
          {
            scanner_group: value,
            credential_id: value,
            is_credential: value,
            certificate_id: value,
            is_certificate: value,
            other: value,
          },
          { requiredKeys: [] },
        ),
        (body) => {
          const entry = { name: 'n', type: 't', body };
          const kept = referencingOnly(entry);
          expect(readReferences(kept.body)).toEqual(readReferences(body));
          expect(Object.keys(kept.body)).not.toContain('other');
        },
      ),
    );
  });
});
