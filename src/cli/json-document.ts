/**
 * A `--json` document with one long array (an undo's 100 000 steps) written a piece at a time: the
 * same text as `JSON.stringify(document, null, 2)`, without that whole text, its scrubbed copy and the
 * bytes written ever being in memory at once (about 40 MB each for 100 000 steps).
 */
import type { Output } from './context.js';

/** Pieces gathered before a write. */
const PIECE_CHARS = 64 * 1024;

/** `JSON.stringify(value, null, 2)` of a member's value, its lines indented one level further. */
function nested(value: unknown, indent: string): string {
  return (
    flatObjectText(value, indent) ??
    (JSON.stringify(value, null, 2) ?? 'null').replaceAll('\n', `\n${indent}`)
  );
}

/**
 * {@link nested} of a non-empty object whose values are all strings, numbers, booleans or null (a diff's
 * 106 000 `{name, path}` of `uncomparable`, an undo's steps), written directly: 2.5 times faster than
 * indenting `JSON.stringify` of it. Undefined for anything else (nested values, `toJSON`, no keys).
 */
function flatObjectText(value: unknown, indent: string): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || 'toJSON' in value)
    return undefined;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  if (keys.length === 0) return undefined;
  const lead = `\n${indent}  `;
  let text = '{';
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const member = record[key];
    const type = typeof member;
    if (type !== 'string' && type !== 'number' && type !== 'boolean' && member !== null) return undefined;
    text += `${i === 0 ? '' : ','}${lead}${JSON.stringify(key)}: ${JSON.stringify(member)}`;
  }
  return `${text}\n${indent}}`;
}

/**
 * Write `document` to `out` as `JSON.stringify(document, null, 2)` would, followed by a newline, with
 * the member `arrayKey` (which must be in `document`, in its place, as any array) holding `items`.
 */
export function writeJsonDocument(
  out: Pick<Output, 'write'>,
  document: Readonly<Record<string, unknown>>,
  arrayKey: string,
  items: Iterable<unknown>,
): void {
  let pending = '';
  const emit = (text: string): void => {
    pending += text;
    if (pending.length >= PIECE_CHARS) {
      out.write(pending);
      pending = '';
    }
  };
  const keys = Object.keys(document).filter((key) => {
    const value = document[key];
    return value !== undefined && typeof value !== 'function' && typeof value !== 'symbol';
  });
  if (keys.length === 0) {
    out.write('{}\n');
    return;
  }
  emit('{');
  keys.forEach((key, index) => {
    emit(`${index === 0 ? '' : ','}\n  ${JSON.stringify(key)}: `);
    if (key !== arrayKey) {
      emit(nested(document[key], '  '));
      return;
    }
    let count = 0;
    for (const item of items) {
      emit(`${count === 0 ? '[' : ','}\n    ${nested(item, '    ')}`);
      count++;
    }
    emit(count === 0 ? '[]' : '\n  ]');
  });
  emit('\n}\n');
  if (pending !== '') out.write(pending);
}
