import { describe, expect, it } from 'vitest';
import { keepsYoungGeneration } from '../../src/cli/heap.js';

describe('keepsYoungGeneration', () => {
  it('keeps the young generation at its first size for the commands whose memory goals need it', () => {
    expect(keepsYoungGeneration(['import', 'snap.jsonl', '--to', 'dr'])).toBe(true);
    expect(keepsYoungGeneration(['--quiet', 'export', '--from', 'prod'])).toBe(true);
    expect(keepsYoungGeneration([])).toBe(true);
  });

  it('lets it grow for cases, whose pages outgrow it, wherever the command word stands', () => {
    expect(keepsYoungGeneration(['cases', 'list', '--env', 'prod'])).toBe(false);
    expect(keepsYoungGeneration(['--quiet', 'cases', 'update'])).toBe(false);
  });
});
