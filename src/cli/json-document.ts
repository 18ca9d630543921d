/**
 * A `--json` document with one long array written a piece at a time: the text of `JSON.stringify(document,
 * null, 2)` without that text, its scrubbed copy and its bytes in memory at once (40 MB each at 100 000).
 */
import { randomUUID } from 'node:crypto';
import type { Output } from './context.js';

const PIECE_CHARS = 64 * 1024;

function layOutItem(item: unknown): string {
  return (JSON.stringify(item, null, 2) ?? 'null').replaceAll('\n', '\n    ');
}

/**
 * Write `document` as `JSON.stringify(document, null, 2)` would, with its member `arrayKey` holding
 * `items`; `itemText` may lay out an item faster for the one shape it knows.
 */
export function writeJsonDocument<T>(
  out: Pick<Output, 'write'>,
  document: Readonly<Record<string, unknown>>,
  arrayKey: string,
  items: Iterable<T>,
  itemText: (item: T) => string = layOutItem,
): void {
  // A marker no value holds stands in the array's place.
  const marker = randomUUID();
  const text = JSON.stringify({ ...document, [arrayKey]: marker }, null, 2);
  const at = text.indexOf(`"${marker}"`);
  let pending = text.slice(0, at);
  let count = 0;
  for (const item of items) {
    pending += `${count === 0 ? '[' : ','}\n    ${itemText(item)}`;
    count++;
    if (pending.length >= PIECE_CHARS) {
      out.write(pending);
      pending = '';
    }
  }
  out.write(`${pending}${count === 0 ? '[]' : '\n  ]'}${text.slice(at + marker.length + 2)}\n`);
}
