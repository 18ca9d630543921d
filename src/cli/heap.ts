/**
 * How far the command's process lets its heap grow: its old generation and its young one. V8 lets the
 * heap grow to about four times what was live after its last full collection when the program
 * allocates fast and collects cheaply, which is what a large import does (each entry's body is read,
 * sent and dropped). Capped at 1.5 times, the peak follows what is live, for more full collections of a
 * few ms each and the same wall time: see docs/why.md, "Why the heap's growth is capped". The young
 * generation keeps its starting size (two 1 MB semi-spaces) instead of doubling up to 16 MB each when
 * many objects live through a scavenge, as an import's start does, except for `cases`: see docs/why.md,
 * "Why the young generation keeps its first size". V8 reads both flags when it collects, so setting them once the
 * process runs takes effect.
 */
import { setFlagsFromString } from 'node:v8';

/**
 * Whether the young generation keeps its first size for the command of `args` (its first word): for
 * every command but `cases`, whose pages of 1 000 cases outgrow it (docs/why.md).
 */
export function keepsYoungGeneration(args: readonly string[]): boolean {
  return args.find((a) => !a.startsWith('-')) !== 'cases';
}

/**
 * Cap the heap's growth for the process of the command `args` (called once by `main.ts`, and by the
 * benchmarks' child that stands for it).
 */
export function limitHeapGrowth(args: readonly string[]): void {
  // The growth factor after a full collection, in percent above 1 (V8's default picks 1.1 to 4).
  setFlagsFromString('--heap-growing-percent=50');
  // The young generation's growth factor (V8's default 2): 1 keeps its starting size.
  if (keepsYoungGeneration(args)) setFlagsFromString('--semi-space-growth-factor=1');
}
