/**
 * Emulator ids: ObjectId-shaped (24 hex digits: seconds, a random value drawn once per process, a
 * counter), so ids made in one process never repeat and sort by creation time.
 */
import { describe, expect, it } from 'vitest';
import { isObjectId, newObjectId } from '../../src/emulator/ids.js';

describe('newObjectId', () => {
  it('makes distinct 24-hex ids sharing the process random part, the counter counting up', () => {
    const ids = Array.from({ length: 5000 }, () => newObjectId());
    expect(ids.every(isObjectId)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.map((id) => id.slice(8, 18))).size).toBe(1);
    const counters = ids.map((id) => Number.parseInt(id.slice(18), 16));
    for (let i = 1; i < counters.length; i++)
      expect((counters[i] as number) - (counters[i - 1] as number)).toSatisfy(
        (step: number) => step === 1 || step < -0xfff000,
      );
  });
});
