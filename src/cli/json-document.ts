/** A `--json` document with one long array (100 000 steps: 40 MB of text) written a piece at a time. */
import { randomUUID } from 'node:crypto';
import type { Output } from './context.js';

const PIECE_CHARS = 64 * 1024;

function layOutItem(item: unknown): string {
  return (JSON.stringify(item, null, 2) ?? 'null').replaceAll('\n', '\n    ');
}

/** Write `document` as `JSON.stringify(document, null, 2)` would, its member `arrayKey` holding `items`. */
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
