/**
 * How a name (of a connection, a scan profile, an entry) is printed for a reader: names come from the
 * service and may hold anything. A name that a terminal would show wrongly is quoted and escaped:
 * control characters (`\n` would break a line in two), and leading or trailing spaces (`Sales-DB ` and
 * `Sales-DB` would look alike). Every other name is printed as it is. The machine-readable outputs
 * (`--json`, reports, journals) keep names verbatim; this is for text meant to be read.
 */

/** C0 and C1 control characters, DEL, and the Unicode line and paragraph separators. */
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const NEEDS_QUOTES = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|^\s|\s$|^$/;

const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `\n`, `\r`, `\t`, else `\u00XX`. */
function escapeControl(ch: string): string {
  return SHORT_ESCAPES[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * `name` as a reader should see it: unchanged when plain; else in double quotes with `"` and `\`
 * escaped and control characters written as escapes (`"Sales-DB "`, `"a\nb"`, `""`).
 */
export function displayName(name: string): string {
  if (!NEEDS_QUOTES.test(name)) return name;
  return `"${name.replace(/["\\]/g, (c) => `\\${c}`).replace(CONTROL, escapeControl)}"`;
}

/** Longest name printed whole in a summary line (a collapsed warning, a count line). */
export const SUMMARY_NAME_LENGTH = 60;

/**
 * {@link displayName}, cut for a summary: a name longer than `max` characters is shown as its first
 * `max` characters, `...` and its length (`"aaaa..." (2000 characters)`), so one long name does not
 * push a whole summary off the screen.
 */
export function summaryName(name: string, max: number = SUMMARY_NAME_LENGTH): string {
  if (name.length <= max) return displayName(name);
  return `${displayName(name.slice(0, max))}... (${name.length} characters)`;
}

/** `1 connection`, `2 connections`, `1 entry`, `3 entries`: a count with its noun in the right number. */
export function countOf(n: number, singular: string, plural: string = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}
