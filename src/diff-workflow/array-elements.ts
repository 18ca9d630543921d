/**
 * The elements of a JSON array of objects read in chunks (the export's body, spec 4.7), each handed
 * out as its bytes as soon as it ends, and {@link parseExportElement} of each one's text. Not a parser: it follows strings (and their escapes) and
 * brackets, which in valid JSON finds exactly the array's elements; each element is checked by
 * whoever parses its text. Whatever is not an array of objects or arrays at this level (a number for
 * an element, a second value after the array, bytes before it) stops the split: {@link
 * JsonArrayElements.broken} says what. A body that is not valid JSON is refused by its real parser
 * (the export's, which reads the same bytes); this one only has to agree with it on what it accepts.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

/**
 * A byte taken as space between the array's elements: JSON's whitespace (space, tab, line feed,
 * carriage return), vertical tab and form feed, and any byte of a character beyond ASCII. The export's
 * parser (stream-json) takes every character of JavaScript's `\s` as space between tokens (a form
 * feed, a byte order mark, a no-break space, U+2028...), and refuses any other character there: what
 * it refuses fails the export anyway.
 */
function isSpace(byte: number): boolean {
  return (byte >= 0x09 && byte <= 0x0d) || byte === 0x20 || byte >= 0x80;
}

/** Split a JSON array's elements out of its bytes, chunk by chunk. */
export class JsonArrayElements {
  /** 0: before the array; 1: between its elements; 2 and more: inside an element. */
  private depth = 0;
  private inString = false;
  /** Inside a string, the chunk before ended on an escaping backslash. */
  private escaped = false;
  /** The array's closing bracket was read. */
  private closed = false;
  /** The bytes of an element begun in an earlier chunk (views: a chunk is not written again). */
  private parts: Buffer[] = [];
  private elements = 0;
  /** Why the bytes are not an array of objects, once they are not (nothing more is handed out). */
  broken: string | undefined;
  /** The elements ended in the chunk being pushed. */
  private ended: Buffer[] = [];

  /**
   * The next bytes of the body: the bytes of each element that ends in them, in order (a view of the
   * chunk, or the element's pieces joined). A chunk is kept (not copied) while an element it holds is
   * incomplete. Nothing once {@link JsonArrayElements.broken} is set.
   */
  push(chunk: Buffer): Buffer[] {
    this.ended = [];
    if (this.broken !== undefined) return this.ended;
    const n = chunk.length;
    /** Where the element under way began in this chunk (0 when it began in an earlier one). */
    let start = this.depth >= 2 ? 0 : -1;
    let i = 0;
    while (i < n) {
      if (this.inString) {
        i = this.skipString(chunk, i);
        continue;
      }
      const byte = chunk[i] as number;
      if (this.depth >= 2) {
        if (byte === QUOTE) this.inString = true;
        else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) this.depth++;
        else if ((byte === CLOSE_BRACE || byte === CLOSE_BRACKET) && --this.depth === 1) {
          this.emit(chunk, start, i + 1);
          start = -1;
        }
      } else {
        const problem = this.between(byte);
        if (problem !== undefined) {
          this.stop(problem);
          return this.ended;
        }
        if (this.depth === 2) start = i;
      }
      i++;
    }
    if (start >= 0) this.parts.push(start === 0 ? chunk : chunk.subarray(start));
    return this.ended;
  }

  /** A byte outside every element: what is wrong with it, if anything (else the state moves on). */
  private between(byte: number): string | undefined {
    if (isSpace(byte)) return undefined;
    if (this.closed) return 'more after the array';
    if (this.depth === 0) {
      if (byte !== OPEN_BRACKET) return 'not an array';
      this.depth = 1;
      return undefined;
    }
    if (byte === COMMA) return undefined;
    if (byte === CLOSE_BRACKET) {
      this.depth = 0;
      this.closed = true;
      return undefined;
    }
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      this.depth = 2;
      return undefined;
    }
    return `element ${this.elements} is not an object`;
  }

  /** Bytes of the element under way held from earlier chunks. */
  pendingBytes(): number {
    let bytes = 0;
    for (const part of this.parts) bytes += part.length;
    return bytes;
  }

  /** After the last chunk: why the bytes were not an array read whole, or undefined when they were. */
  end(): string | undefined {
    if (this.broken === undefined && !this.closed) this.stop('the array is not closed');
    return this.broken;
  }

  /**
   * Inside a string at `i`: the index after its closing quote, or `chunk.length` when it goes on in
   * the next chunk. A quote is the string's end unless an odd run of backslashes precedes it.
   */
  private skipString(chunk: Buffer, from: number): number {
    let i = from;
    if (this.escaped) {
      this.escaped = false;
      i++;
    }
    const n = chunk.length;
    while (i < n) {
      const quote = chunk.indexOf(QUOTE, i);
      const end = quote < 0 ? n : quote;
      let run = 0;
      for (let k = end - 1; k >= i && chunk[k] === BACKSLASH; k--) run++;
      if (quote < 0) {
        // The run at the chunk's end escapes the first byte of the next chunk when odd.
        this.escaped = run % 2 === 1;
        return n;
      }
      i = quote + 1;
      if (run % 2 === 0) {
        this.inString = false;
        return i;
      }
    }
    return i;
  }

  private emit(chunk: Buffer, start: number, end: number): void {
    this.elements++;
    if (this.parts.length === 0) {
      this.ended.push(chunk.subarray(start, end));
      return;
    }
    this.parts.push(chunk.subarray(0, end));
    this.ended.push(Buffer.concat(this.parts));
    this.parts = [];
  }

  private stop(why: string): void {
    this.broken = why;
    this.parts = [];
  }
}

/** A string of JSON, or a character of JavaScript's `\s` (outside strings: space between tokens). */
const STRING_OR_SPACE = /"(?:[^"\\]|\\.)*"|\s/g;

/**
 * `JSON.parse` of an element's text, taking as space between its tokens every character the export's
 * parser takes so (JavaScript's `\s`: a no-break space, U+2028...), which `JSON.parse` refuses: tried
 * again with each such character, outside strings, made a space.
 */
export function parseExportElement(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const spaced = text.replace(STRING_OR_SPACE, (match) => (match.length === 1 ? ' ' : match));
    if (spaced === text) throw error;
    return JSON.parse(spaced);
  }
}
