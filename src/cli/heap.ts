/**
 * How far the command's process lets its heap grow: the old generation to 1.5 times what was live
 * (docs/why.md, "Why the heap's growth is capped"), the young one not at all but for `cases` ("Why the young
 * generation keeps its first size"). V8 reads both flags when it collects: setting them late works.
 */
import { setFlagsFromString } from 'node:v8';

/** Whether the young generation keeps its first size: not for `cases`, its pages outgrow it (docs/why.md). */
export function keepsYoungGeneration(args: readonly string[]): boolean {
  return args.find((a) => !a.startsWith('-')) !== 'cases';
}

/** Cap the heap's growth for the command `args` (once by `main.ts`, and by the benchmarks' stand-in). */
export function limitHeapGrowth(args: readonly string[]): void {
  // The growth factor after a full collection, in percent above 1 (V8's default picks 1.1 to 4).
  setFlagsFromString('--heap-growing-percent=50');
  // The young generation's growth factor (V8's default 2): 1 keeps its starting size.
  if (keepsYoungGeneration(args)) setFlagsFromString('--semi-space-growth-factor=1');
}
