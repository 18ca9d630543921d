import pLimit from 'p-limit';

/**
 * Run `task` for each item, at most `concurrency` at a time, in order; `task` must not reject. Items
 * are queued a window at a time: 100 000 queued tasks would be most of what a large import holds.
 */
export async function forEachLimited<T>(
  items: readonly T[],
  concurrency: number,
  task: (item: T, index: number) => Promise<void>,
): Promise<void> {
  const limit = pLimit(concurrency);
  const window = new Set<Promise<void>>();
  for (let i = 0; i < items.length; i++) {
    const item = items[i] as T;
    const running: Promise<void> = limit(() => task(item, i)).then(() => {
      window.delete(running);
    });
    window.add(running);
    if (window.size >= 2 * concurrency) await Promise.race(window);
  }
  await Promise.all(window);
}
