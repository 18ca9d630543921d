/**
 * A snapshot's entry line read without parsing it: a validating scan of its JSON text that keeps
 * only what the merge of two snapshots needs of a line found byte-equal on both sides (its name and
 * type, and where its masks are), where `JSON.parse` builds the whole entry (100 000 connections:
 * about 70 ms to scan, 270 to 390 ms to parse, and the parsed values to collect).
 *
 * The scan accepts a line only when `JSON.parse` of its UTF-8 text (as the reader parses it) gives a
 * plain object, and what it says of that object is what the parsed object holds: the last value of a
 * repeated key, as `JSON.parse` keeps. It declines (`false`, and the caller parses the line as before,
 * with the reader's own errors) whatever it does not read exactly: a syntax error, a key written with
 * an escape, nesting deeper than 64, a top level that is not an object. A property test holds it to
 * `JSON.parse`.
 */

import { MASK, type MaskAnswer } from '../secrets.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const SLASH = 0x2f;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;

/** A member's value: a string written plainly, the mask `"******"`, or anything else. */
const OTHER = 0;
const STRING = 1;
const MASKED = 2;

/** Deeper than this, the scan declines (`JSON.parse` takes any depth). */
const MAX_DEPTH = 64;
/** `custom_fields` of more elements than this are keyed whole by the diff: the scan says "unknown". */
const CUSTOM_FIELDS_READ = 16;
/** Types whose text is kept to be used again. */
const TYPES_KEPT = 32;

const EMPTY = Buffer.alloc(0);

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

function isHex(c: number | undefined): boolean {
  return (
    c !== undefined && ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66))
  );
}

/** One line's scan; {@link EntryLineScan.scan} again for the next (its tables are used again). */
export class EntryLineScan {
  private bytes: Buffer = EMPTY;
  private end = 0;
  /** Set by {@link string}: whether the string just read holds an escape. */
  private escaped = false;
  /** Set by {@link next}: whether the container just ended. */
  private closed = false;
  /** Types decoded lately (ASCII only, so their bytes compare as text). */
  private readonly types: string[] = [];
  /** String values written as the mask, at any depth; -1 once a `\u` escape is met. */
  private maskCount = 0;

  /** The top-level members, in order. */
  private readonly members = new Members();

  // The last top-level `name` and `type`: where their string is (without quotes), -1 when not a string.
  private nameStart = -1;
  private nameEnd = -1;
  private nameEscaped = false;
  private typeStart = -1;
  private typeEnd = -1;
  private typeEscaped = false;

  /** The last top-level `custom_fields`: absent, an array read below, or something the scan cannot answer for. */
  private custom: 'absent' | 'read' | 'unknown' = 'absent';
  private elements = 0;
  /** Per element: its members' range in the tables below, its `field_name` string (-1: none, not a plain string). */
  private readonly elementFirst = new Int32Array(CUSTOM_FIELDS_READ);
  private readonly elementLast = new Int32Array(CUSTOM_FIELDS_READ);
  private readonly fieldNameStart = new Int32Array(CUSTOM_FIELDS_READ);
  private readonly fieldNameEnd = new Int32Array(CUSTOM_FIELDS_READ);
  /** The members of every element of `custom_fields`, one element after the other. */
  private readonly fieldMembers = new Members();

  /**
   * Scan `bytes` (one line, without its newline). True when it is a JSON object that `JSON.parse`
   * reads as this scan does; false to parse it instead. The buffer is read again by the methods
   * below: they answer for the last line scanned, while its bytes are unchanged.
   */
  scan(bytes: Buffer): boolean {
    this.bytes = bytes;
    this.end = bytes.length;
    this.members.count = 0;
    this.maskCount = 0;
    this.nameStart = -1;
    this.typeStart = -1;
    this.custom = 'absent';
    this.elements = 0;
    this.fieldMembers.count = 0;
    let i = space(bytes, 0);
    if (bytes[i] !== LBRACE) return false;
    i = space(bytes, i + 1);
    if (bytes[i] === RBRACE) return space(bytes, i + 1) === this.end;
    for (;;) {
      if (bytes[i] !== QUOTE) return false;
      const keyStart = i + 1;
      i = this.string(i);
      if (i < 0 || this.escaped) return false;
      const keyEnd = i - 1;
      i = space(bytes, i);
      if (bytes[i] !== COLON) return false;
      i = space(bytes, i + 1);
      const valueStart = i;
      let kind = OTHER;
      const key = topLevelKey(bytes, keyStart, keyEnd);
      if (bytes[i] === QUOTE) {
        i = this.string(i);
        if (i < 0) return false;
        kind = isMask(bytes, valueStart, i) ? MASKED : STRING;
        if (kind === MASKED) this.countMask();
      } else if (key === CUSTOM_FIELDS && bytes[i] === LBRACKET) {
        i = this.customFields(i);
      } else {
        i = this.value(i, 2);
      }
      if (i < 0) return false;
      if (key === NAME) {
        this.nameStart = kind === OTHER ? -1 : valueStart + 1;
        this.nameEnd = i - 1;
        this.nameEscaped = this.escaped;
      } else if (key === TYPE) {
        this.typeStart = kind === OTHER ? -1 : valueStart + 1;
        this.typeEnd = i - 1;
        this.typeEscaped = this.escaped;
      } else if (key === CUSTOM_FIELDS && bytes[valueStart] !== LBRACKET) {
        this.custom = 'unknown';
      }
      this.members.add(keyStart, keyEnd, kind);
      i = this.next(i, RBRACE);
      if (i < 0) return false;
      if (this.closed) return space(bytes, i) === this.end;
    }
  }

  /** The entry's `name` when it is a string (as `JSON.parse` reads it), else undefined. */
  name(): string | undefined {
    return this.nameStart < 0 ? undefined : this.text(this.nameStart, this.nameEnd, this.nameEscaped);
  }

  /**
   * A bound on how many values of the entry are the mask, or undefined when the line holds a `\u`
   * escape (a value so written may be the mask): the values written as the mask, at any depth (a
   * repeated key's earlier value among them), as `maskTokensIn` of `src/diff/merged.ts` bounds them
   * but tighter (a key written as the mask is no value).
   */
  masks(): number | undefined {
    return this.maskCount < 0 ? undefined : this.maskCount;
  }

  private countMask(): void {
    if (this.maskCount >= 0) this.maskCount++;
  }

  /** The entry's `type` when it is a string, else undefined. */
  type(): string | undefined {
    if (this.typeStart < 0) return undefined;
    if (this.typeEscaped) return this.text(this.typeStart, this.typeEnd, true);
    // A snapshot has a few types: the text of one seen lately is used again, not decoded once per line.
    const types = this.types;
    for (let k = 0; k < types.length; k++) {
      const seen = types[k] as string;
      if (keyEquals(this.bytes, this.typeStart, this.typeEnd, seen)) return seen;
    }
    const type = this.text(this.typeStart, this.typeEnd, false);
    if (isAsciiText(type)) {
      if (types.length >= TYPES_KEPT) types.shift();
      types.push(type);
    }
    return type;
  }

  /** Whether the top-level value of `key` is the mask (the text has no `\u` escape: see `maskTokensIn`). */
  maskAt(key: string): MaskAnswer {
    if (!isAsciiText(key)) return 'unknown';
    return this.members.maskOf(this.bytes, key, 0, this.members.count);
  }

  /**
   * Whether `key` of the `custom_fields` element named `field` is the mask, as the diff reads
   * `custom_fields` (keyed by `field_name` when every element is an object with a distinct string
   * `field_name`; see `customFieldAsCompared`).
   */
  customMaskAt(field: string, key: string): MaskAnswer {
    if (this.custom === 'absent') return 'no';
    if (this.custom === 'unknown' || !isAsciiText(field) || !isAsciiText(key)) return 'unknown';
    const bytes = this.bytes;
    let found = -1;
    for (let e = 0; e < this.elements; e++) {
      const start = this.fieldNameStart[e] as number;
      if (start < 0) return 'unknown';
      const end = this.fieldNameEnd[e] as number;
      for (let other = 0; other < e; other++) {
        // Two elements of one name: `custom_fields` is not keyed, there is no such place.
        if (
          rangesEqual(
            bytes,
            start,
            end,
            this.fieldNameStart[other] as number,
            this.fieldNameEnd[other] as number,
          )
        )
          return 'no';
      }
      if (keyEquals(bytes, start, end, field)) found = e;
    }
    if (found < 0) return 'no';
    return this.fieldMembers.maskOf(
      bytes,
      key,
      this.elementFirst[found] as number,
      this.elementLast[found] as number,
    );
  }

  private text(start: number, end: number, escaped: boolean): string {
    return escaped
      ? (JSON.parse(this.bytes.toString('utf8', start - 1, end + 1)) as string)
      : this.bytes.toString('utf8', start, end);
  }

  /** The top-level `custom_fields` array at `i`: its elements' members kept. Returns the end, or -1. */
  private customFields(i: number): number {
    const bytes = this.bytes;
    this.custom = 'read';
    this.elements = 0;
    this.fieldMembers.count = 0;
    i = space(bytes, i + 1);
    if (bytes[i] === RBRACKET) return i + 1;
    for (;;) {
      if (bytes[i] === LBRACE && this.elements < CUSTOM_FIELDS_READ) i = this.customField(i);
      else {
        this.custom = 'unknown';
        i = this.value(i, 3);
      }
      if (i < 0) return -1;
      i = this.next(i, RBRACKET);
      if (i < 0 || this.closed) return i;
    }
  }

  /** One object element of `custom_fields` at `i`. Returns the end, or -1. */
  private customField(i: number): number {
    const bytes = this.bytes;
    const e = this.elements++;
    this.elementFirst[e] = this.fieldMembers.count;
    this.fieldNameStart[e] = -1;
    i = space(bytes, i + 1);
    if (bytes[i] === RBRACE) {
      this.elementLast[e] = this.fieldMembers.count;
      return i + 1;
    }
    for (;;) {
      if (bytes[i] !== QUOTE) return -1;
      const keyStart = i + 1;
      i = this.string(i);
      if (i < 0) return -1;
      // A key written with an escape is not compared by its bytes: no place of `custom_fields` is read.
      if (this.escaped) this.custom = 'unknown';
      const keyEnd = i - 1;
      i = space(bytes, i);
      if (bytes[i] !== COLON) return -1;
      i = space(bytes, i + 1);
      const valueStart = i;
      let kind = OTHER;
      if (bytes[i] === QUOTE) {
        i = this.string(i);
        if (i < 0) return -1;
        kind = isMask(bytes, valueStart, i) ? MASKED : STRING;
        if (kind === MASKED) this.countMask();
      } else {
        i = this.value(i, 4);
        if (i < 0) return -1;
      }
      if (keyEnd - keyStart === 10 && keyEquals(bytes, keyStart, keyEnd, 'field_name')) {
        // A name written with an escape, or holding other than ASCII (invalid UTF-8 bytes read as
        // U+FFFD: two names of different bytes may read the same), is not compared by its bytes.
        const plain = kind !== OTHER && !this.escaped && isAscii(bytes, valueStart + 1, i - 1);
        this.fieldNameStart[e] = plain ? valueStart + 1 : -1;
        this.fieldNameEnd[e] = i - 1;
      }
      this.fieldMembers.add(keyStart, keyEnd, kind);
      i = this.next(i, RBRACE);
      if (i < 0) return -1;
      if (this.closed) {
        this.elementLast[e] = this.fieldMembers.count;
        return i;
      }
    }
  }

  /**
   * After an item (a member or an element) ending at `i`: the start of the next one, past a comma; or,
   * when `close` ends the container, the index after it, with {@link closed} set; else -1.
   */
  private next(i: number, close: number): number {
    const bytes = this.bytes;
    i = space(bytes, i);
    this.closed = bytes[i] === close;
    if (this.closed) return i + 1;
    return bytes[i] === COMMA ? space(bytes, i + 1) : -1;
  }

  /** Any JSON value at `i`, at nesting `depth`. Returns the index after it, or -1. */
  private value(i: number, depth: number): number {
    const bytes = this.bytes;
    const c = bytes[i];
    if (c === QUOTE) {
      const end = this.string(i);
      if (end - i === MASK.length + 2 && isMask(bytes, i, end)) this.countMask();
      return end;
    }
    if (c === LBRACE) {
      if (depth > MAX_DEPTH) return -1;
      i = space(bytes, i + 1);
      if (bytes[i] === RBRACE) return i + 1;
      for (;;) {
        if (bytes[i] !== QUOTE) return -1;
        i = this.string(i);
        if (i < 0) return -1;
        i = space(bytes, i);
        if (bytes[i] !== COLON) return -1;
        i = this.value(space(bytes, i + 1), depth + 1);
        if (i < 0) return -1;
        i = this.next(i, RBRACE);
        if (i < 0 || this.closed) return i;
      }
    }
    if (c === LBRACKET) {
      if (depth > MAX_DEPTH) return -1;
      i = space(bytes, i + 1);
      if (bytes[i] === RBRACKET) return i + 1;
      for (;;) {
        i = this.value(i, depth + 1);
        if (i < 0) return -1;
        i = this.next(i, RBRACKET);
        if (i < 0 || this.closed) return i;
      }
    }
    if (c === 0x74) return literal(bytes, i, TRUE);
    if (c === 0x66) return literal(bytes, i, FALSE);
    if (c === 0x6e) return literal(bytes, i, NULL);
    return this.number(i);
  }

  /** The string whose opening quote is at `i`. Returns the index after its closing quote, or -1. */
  private string(i: number): number {
    const bytes = this.bytes;
    const end = this.end;
    for (i++; i < end; i++) {
      const c = bytes[i] as number;
      // Most bytes: neither a quote, a backslash nor a control character.
      if (c > QUOTE && c !== BACKSLASH) continue;
      if (c === QUOTE) {
        this.escaped = false;
        return i + 1;
      }
      if (c === BACKSLASH) return this.escapedString(i);
      if (c < 0x20) return -1;
    }
    return -1;
  }

  /** The rest of a string from its first backslash at `i` (see {@link string}). */
  private escapedString(i: number): number {
    const bytes = this.bytes;
    const end = this.end;
    while (i < end) {
      const c = bytes[i++] as number;
      if (c === QUOTE) {
        this.escaped = true;
        return i;
      }
      if (c < 0x20) return -1;
      if (c !== BACKSLASH) continue;
      const d = bytes[i++];
      if (d === 0x75) {
        this.maskCount = -1;
        if (!isHex(bytes[i]) || !isHex(bytes[i + 1]) || !isHex(bytes[i + 2]) || !isHex(bytes[i + 3]))
          return -1;
        i += 4;
      } else if (
        d !== QUOTE &&
        d !== BACKSLASH &&
        d !== SLASH &&
        d !== 0x62 &&
        d !== 0x66 &&
        d !== 0x6e &&
        d !== 0x72 &&
        d !== 0x74
      ) {
        return -1;
      }
    }
    return -1;
  }

  /** A number at `i` (JSON's grammar: no leading zero, no lone sign or point). Returns its end, or -1. */
  private number(i: number): number {
    const bytes = this.bytes;
    if (bytes[i] === MINUS) i++;
    if (bytes[i] === ZERO) i++;
    else if (isDigit(bytes[i]) && bytes[i] !== ZERO) {
      i++;
      while (isDigit(bytes[i])) i++;
    } else return -1;
    if (bytes[i] === DOT) {
      i++;
      if (!isDigit(bytes[i])) return -1;
      while (isDigit(bytes[i])) i++;
    }
    if (bytes[i] === 0x65 || bytes[i] === 0x45) {
      i++;
      if (bytes[i] === PLUS || bytes[i] === MINUS) i++;
      if (!isDigit(bytes[i])) return -1;
      while (isDigit(bytes[i])) i++;
    }
    return i;
  }
}

/** Members of objects as scanned: each key's place (without quotes) and its value's kind, in order. */
class Members {
  count = 0;
  private keyStart = new Int32Array(32);
  private keyEnd = new Int32Array(32);
  private kind = new Uint8Array(32);

  add(keyStart: number, keyEnd: number, kind: number): void {
    const m = this.count++;
    if (m === this.kind.length) {
      this.keyStart = grow(this.keyStart);
      this.keyEnd = grow(this.keyEnd);
      this.kind = growKinds(this.kind);
    }
    this.keyStart[m] = keyStart;
    this.keyEnd[m] = keyEnd;
    this.kind[m] = kind;
  }

  /** Whether `key` (ASCII) of the members `from` to `to` holds the mask: its last one, as `JSON.parse` keeps. */
  maskOf(bytes: Buffer, key: string, from: number, to: number): MaskAnswer {
    for (let m = to - 1; m >= from; m--) {
      if (keyEquals(bytes, this.keyStart[m] as number, this.keyEnd[m] as number, key))
        return this.kind[m] === MASKED ? 'mask' : 'no';
    }
    return 'no';
  }
}

/** JSON's whitespace from `i`: the index of the next other byte (most often `i`: checked first, inline). */
function space(bytes: Buffer, i: number): number {
  // In bounds first: a load past the end (the line's last byte is read past once) is slower.
  return i < bytes.length && (bytes[i] as number) > 0x20 ? i : spaceFrom(bytes, i);
}

function spaceFrom(bytes: Buffer, i: number): number {
  const end = bytes.length;
  while (i < end) {
    const c = bytes[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
  return i;
}

const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL = Buffer.from('null');

function literal(bytes: Buffer, i: number, word: Buffer): number {
  for (let k = 0; k < word.length; k++) if (bytes[i + k] !== word[k]) return -1;
  return i + word.length;
}

/** The string from `start` to `end` (quotes included) is the mask written plainly. */
function isMask(bytes: Buffer, start: number, end: number): boolean {
  if (end - start !== MASK.length + 2) return false;
  for (let k = 0; k < MASK.length; k++) if (bytes[start + 1 + k] !== MASK.charCodeAt(k)) return false;
  return true;
}

/** Every byte from `start` to `end` is ASCII (so two such names are equal exactly when their bytes are). */
function isAscii(bytes: Buffer, start: number, end: number): boolean {
  for (let k = start; k < end; k++) if ((bytes[k] as number) > 0x7f) return false;
  return true;
}

const NAME = 1;
const TYPE = 2;
const CUSTOM_FIELDS = 3;

/** Which of the keys the scan keeps facts of the key from `start` to `end` is (0: another). */
function topLevelKey(bytes: Buffer, start: number, end: number): number {
  // Each comparison starts with the length: most keys are none of these.
  if (keyEquals(bytes, start, end, 'name')) return NAME;
  if (keyEquals(bytes, start, end, 'type')) return TYPE;
  return keyEquals(bytes, start, end, 'custom_fields') ? CUSTOM_FIELDS : 0;
}

/** Whether the key written plainly from `start` to `end` is `key`, an ASCII string (see {@link isAsciiText}). */
function keyEquals(bytes: Buffer, start: number, end: number, key: string): boolean {
  const length = key.length;
  if (end - start !== length) return false;
  for (let k = 0; k < length; k++) if (bytes[start + k] !== key.charCodeAt(k)) return false;
  return true;
}

/** The bytes from `start` to `end` are those from `otherStart` to `otherEnd`. */
function rangesEqual(
  bytes: Buffer,
  start: number,
  end: number,
  otherStart: number,
  otherEnd: number,
): boolean {
  if (end - start !== otherEnd - otherStart) return false;
  for (let k = 0; k < end - start; k++) if (bytes[start + k] !== bytes[otherStart + k]) return false;
  return true;
}

/** A key of code units up to 0x7f only: its UTF-8 bytes are its code units, so bytes compare as text. */
function isAsciiText(key: string): boolean {
  for (let k = 0; k < key.length; k++) if (key.charCodeAt(k) > 0x7f) return false;
  return true;
}

function grow(array: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const bigger = new Int32Array(array.length * 2);
  bigger.set(array);
  return bigger;
}

function growKinds(array: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> {
  const bigger = new Uint8Array(array.length * 2);
  bigger.set(array);
  return bigger;
}
