/**
 * Names printed for a reader: one a terminal would show wrongly (control characters, leading or trailing
 * spaces: `Sales-DB ` and `Sales-DB` look alike) is quoted and escaped. Machine outputs keep names verbatim.
 */

const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
const NEEDS_QUOTES = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|^\s|\s$|^$/;

const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeControl(ch: string): string {
  return SHORT_ESCAPES[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** `name` unchanged when plain, else quoted and escaped (`"Sales-DB "`, `"a\nb"`, `""`). */
export function displayName(name: string): string {
  if (!NEEDS_QUOTES.test(name)) return name;
  return `"${name.replace(/["\\]/g, (c) => `\\${c}`).replace(CONTROL, escapeControl)}"`;
}

/** {@link displayName} cut for a summary line: `"aaaa..." (2000 characters)`. */
export function summaryName(name: string, max = 60): string {
  if (name.length <= max) return displayName(name);
  return `${displayName(name.slice(0, max))}... (${name.length} characters)`;
}

/** `1 connection`, `3 entries`: a count with its noun in the right number. */
export function countOf(n: number, singular: string, plural: string = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}
