/**
 * The runners' concurrency: every item through one task, at most `concurrency` at a time, started in
 * the items' order (p-limit is first in, first out).
 */
import pLimit from 'p-limit';

/**
 * Run `task` for each item (with its index), at most `concurrency` at a time; resolves when every task
 * has. Items are handed to the limiter a window (twice the concurrency) at a time, not all at once:
 * 100 000 queued tasks (a promise and a closure each) would be most of what a large import holds.
 * `task` must not reject (the runners record every failure as an outcome or a stop).
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
