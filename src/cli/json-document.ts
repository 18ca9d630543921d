/**
 * A `--json` document with one long array (an undo's 100 000 steps) written a piece at a time: the
 * same text as `JSON.stringify(document, null, 2)`, without that whole text, its scrubbed copy and the
 * bytes written ever being in memory at once (about 40 MB each for 100 000 steps).
 */
import { randomUUID } from 'node:crypto';
import type { Output } from './context.js';

/** Pieces gathered before a write. */
const PIECE_CHARS = 64 * 1024;

/** An item of the array as `JSON.stringify(document, null, 2)` writes it there (indented four spaces). */
function layOutItem(item: unknown): string {
  return (JSON.stringify(item, null, 2) ?? 'null').replaceAll('\n', '\n    ');
}

/**
 * Write `document` to `out` as `JSON.stringify(document, null, 2)` would, followed by a newline, with
 * the member `arrayKey` (which must be in `document`, in its place, as any array) holding `items`.
 * `itemText`, when given, lays an item out as that would, faster for the one shape of item it knows.
 */
export function writeJsonDocument<T>(
  out: Pick<Output, 'write'>,
  document: Readonly<Record<string, unknown>>,
  arrayKey: string,
  items: Iterable<T>,
  itemText: (item: T) => string = layOutItem,
): void {
  // The rest of the document laid out by JSON.stringify, a marker no value holds in the array's place.
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
