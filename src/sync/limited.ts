/**
 * The runners' concurrency: `concurrency` workers, each taking the next item until none is left, so
 * items start in their order and nothing is queued ahead of them (100 000 items hold no promise each).
 * `task` must not reject (the runners record every failure as an outcome or a stop).
 */
export async function forEachLimited<T>(
  items: readonly T[],
  concurrency: number,
  task: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      await task(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
