/**
 * How the command's process grows its heap. V8 lets the heap grow to about four times what was live
 * after its last full collection when the program allocates fast and collects cheaply, which is what a
 * large import does (each entry's body is read, sent and dropped): 50 MB live became 250 MB of heap.
 * With the growth capped at 1.5 times, the peak follows what is live (an import of 50 000 entries:
 * 194 MB peak RSS instead of 314 MB) for about 30 more full collections of a few ms each, the same
 * wall time (bench/README.md). V8 reads this flag at every collection, so setting it once
 * the process runs takes effect.
 */
import { setFlagsFromString } from 'node:v8';

/** Growth factor of the heap after a full collection, in percent above 1 (V8's default picks 1.1 to 4). */
export const HEAP_GROWING_PERCENT = 50;

/** Cap the heap's growth for this process (called by `main.ts`, and by the benchmarks' child that stands for it). */
export function limitHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
}

/** Growth factor for a streaming command (see {@link relaxHeapGrowth}), in percent above 1. */
export const STREAMING_HEAP_GROWING_PERCENT = 100;

/**
 * Let the heap grow twice what is live, for a command whose live heap stays small whatever the size of
 * the environment (`cases list` streams page by page). Capped at 1.5 times, a heap of 16 MB live grows
 * by V8's minimum step and is fully collected every few pages: 36 full collections instead of 1 for
 * 300 000 cases. V8's own growth (up to 4 times) peaked 8 MB higher for 1 000 000 cases (144 to 150 MB
 * against 138 to 140 MB at 2 times, the same wall time: bench/README.md).
 */
export function relaxHeapGrowth(): void {
  setFlagsFromString(`--heap-growing-percent=${STREAMING_HEAP_GROWING_PERCENT}`);
}

/**
 * V8's own heap growth back (up to four times what is live), for a command that holds little while
 * it reads much: the diff of two snapshots holds the current line of each and the result. With the
 * growth capped at 1.5 times, 100 000 connections took six full collections (two with V8's own
 * growth), about 60 ms of 0.75 s, and peaked higher (159 to 165 MB against 148 to 155 MB).
 */
export function ownHeapGrowth(): void {
  setFlagsFromString('--heap-growing-percent=0');
}
